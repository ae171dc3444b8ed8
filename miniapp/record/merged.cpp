#include "miniapp/record/merged.hpp"

#include "miniapp/core/clock.hpp"
#include "miniapp/core/json_writer.hpp"
#include "miniapp/core/stats.hpp"
#include "miniapp/record/reader.hpp"
#include "miniapp/record/schema.hpp"
#include "miniapp/record/writers.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace miniapp {

using namespace results;

namespace {

// Writes a parsed JSON value back as JSON: quoted scalars stay strings, plain ones become
// null, booleans or numbers.
void emit(JsonWriter& j, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      j.begin_object();
      for (auto it = n.begin(); it != n.end(); ++it) {
        j.key(it->first.Scalar());
        emit(j, it->second);
      }
      j.end_object();
      return;
    case YAML::NodeType::Sequence:
      j.begin_array();
      for (const YAML::Node& v : n) emit(j, v);
      j.end_array();
      return;
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") {
        j.value(s);
        return;
      }
      if (s == "null" || s == "~" || s.empty()) {
        j.null();
        return;
      }
      if (s == "true" || s == "false") {
        j.value(s == "true");
        return;
      }
      char* end = nullptr;
      errno = 0;
      if (s.find_first_of(".eE") == std::string::npos) {
        if (s[0] == '-') {
          const long long v = std::strtoll(s.c_str(), &end, 10);
          if (errno == 0 && *end == '\0') {
            j.value(static_cast<std::int64_t>(v));
            return;
          }
        } else {
          const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
          if (errno == 0 && *end == '\0') {
            j.value(static_cast<std::uint64_t>(v));
            return;
          }
        }
      }
      errno = 0;
      const double d = std::strtod(s.c_str(), &end);
      if (errno == 0 && *end == '\0') j.value(d);
      else j.value(s);
      return;
    }
    default:
      j.null();
  }
}

MergedTask read_task(const std::string& dir) {
  MergedTask t;
  t.directory = dir;
  const fs::path file = fs::path(dir) / "results.json";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    t.status = "missing";
    t.error = fs::is_directory(dir, ec) ? "no results.json in it: the run never started, or stopped before its first save"
                                        : "no such directory: the task never ran";
    return t;
  }
  try {
    t.results.reset(results::load(file.string()));
  } catch (const results::ReadError& e) {
    t.status = "unreadable";
    using Kind = results::ReadError::Kind;
    if (e.kind == Kind::NotJson) t.error = file.string() + ":" + std::to_string(e.line) + ": not valid JSON: " + e.what();
    else t.error = file.string() + " is not a results file of schema " + kResultsSchema;
    return t;
  }
  t.status = text(t.results, "status", "running");
  t.planned = static_cast<std::size_t>(number(t.results, "planned_measurements"));
  t.finished = static_cast<std::size_t>(number(t.results, "finished_measurements"));
  const std::string recorded_error = text(t.results, "error");
  const std::string progress = std::to_string(t.finished) + " of " + std::to_string(t.planned) + " measurements kept";
  if (t.status == "interrupted") t.error = recorded_error + (recorded_error.empty() ? "" : "; ") + progress;
  else if (t.status == "failed") t.error = recorded_error + (recorded_error.empty() ? "" : "; ") + progress;
  else if (t.status == "running")
    t.error = "still running, or killed without a chance to save (SIGKILL, out of memory, node failure); " + progress;
  for (const YAML::Node& m : child(t.results, "measurements")) {
    const YAML::Node v = child(m, "verification");
    if (flag(v, "checked") && !flag(v, "passed")) t.verification_failed = true;
  }
  t.job_id = environment(t.results, "SLURM_JOB_ID");
  t.array_job_id = environment(t.results, "SLURM_ARRAY_JOB_ID");
  t.array_task_id = environment(t.results, "SLURM_ARRAY_TASK_ID");
  t.node_list = environment(t.results, "SLURM_JOB_NODELIST");
  t.gpus = environment(t.results, "SLURM_JOB_GPUS");
  t.hostname = text(child(t.results, "provenance"), "hostname");
  return t;
}

int severity(const std::string& status) {
  if (status == "complete") return 0;
  if (status == "running") return 1;
  if (status == "interrupted") return 2;
  return 3;  // failed, missing, unreadable
}

std::vector<std::string> case_sizes(const MergedResults& merged, const std::string& name) {
  std::vector<std::string> sizes;
  for (const MergedTask& t : merged.tasks)
    for (const YAML::Node& c : child(child(t.results, "deck"), "cases"))
      if (text(c, "name") == name)
        for (const YAML::Node& s : child(c, "sizes"))
          if (std::find(sizes.begin(), sizes.end(), s.Scalar()) == sizes.end()) sizes.push_back(s.Scalar());
  std::sort(sizes.begin(), sizes.end(), [](const std::string& a, const std::string& b) {
    return std::strtoull(a.c_str(), nullptr, 10) < std::strtoull(b.c_str(), nullptr, 10);
  });
  return sizes;
}

Precision parse_precision(const std::string& s) { return s == "float64" ? Precision::Float64 : Precision::Float32; }

// The parts of a measurement that the run's CSV and benchmark writers read.
Measurement measurement_from(const YAML::Node& m) {
  Measurement x;
  x.spec.case_name = text(m, "case");
  x.spec.workload = text(m, "workload");
  x.spec.variant = text(m, "variant");
  x.spec.size = static_cast<std::size_t>(number(m, "size"));
  x.spec.precision = parse_precision(text(m, "precision"));
  x.spec.space = text(m, "space");
  x.spec.policy = parse_mirror_policy(text(m, "policy")).value_or(MirrorPolicy::Host);
  x.spec.generate = text(m, "generate") == "device" ? Generation::Device : Generation::Host;
  const YAML::Node seconds = child(m, "seconds");
  x.seconds.to_device = samples(seconds, "to_device");
  x.seconds.compute = samples(seconds, "compute");
  x.seconds.to_host = samples(seconds, "to_host");
  x.seconds.total = samples(seconds, "total");
  // The CSV has a row per repetition with every phase: a phase left out counts as zero.
  for (std::vector<double>* phase : {&x.seconds.to_device, &x.seconds.compute, &x.seconds.to_host})
    phase->resize(x.seconds.total.size(), 0.0);
  const YAML::Node v = child(m, "verification");
  x.verification.checked = flag(v, "checked");
  x.verification.passed = flag(v, "passed");
  return x;
}

RunRecord record_of(const MergedResults& merged, const std::vector<std::string>& command_line) {
  RunRecord r;
  r.provenance.command_line = command_line;
  r.provenance.started = now_iso8601();
  for (const MergedTask& t : merged.tasks) {
    if (!t.results.IsDefined()) continue;
    if (r.provenance.hostname.empty()) r.provenance.hostname = t.hostname;
    for (const YAML::Node& m : child(t.results, "measurements")) r.measurements.push_back(measurement_from(m));
  }
  return r;
}

}  // namespace

MergedResults merge_directories(const std::vector<std::string>& directories) {
  MergedResults merged;
  for (const std::string& d : directories)
    for (const std::string& run : run_directories(d)) merged.tasks.push_back(read_task(run));
  int worst = 0;
  for (const MergedTask& t : merged.tasks) {
    if (severity(t.status) > worst) {
      worst = severity(t.status);
      merged.status = t.status == "missing" || t.status == "unreadable" ? "failed" : t.status;
    }
    for (const YAML::Node& m : child(t.results, "measurements")) {
      const std::string name = text(m, "case");
      if (std::find(merged.case_names.begin(), merged.case_names.end(), name) == merged.case_names.end())
        merged.case_names.push_back(name);
    }
    for (const YAML::Node& c : child(child(t.results, "deck"), "cases")) {
      const std::string name = text(c, "name");
      if (std::find(merged.case_names.begin(), merged.case_names.end(), name) == merged.case_names.end())
        merged.case_names.push_back(name);
    }
  }
  if (worst == 0) merged.status = "complete";
  return merged;
}

namespace {

void write_tasks(JsonWriter& j, const MergedResults& merged) {
  j.key("tasks").begin_array();
  for (const MergedTask& t : merged.tasks) {
    j.begin_object();
    j.field("directory", t.directory).field("status", t.status);
    if (!t.error.empty()) j.field("error", t.error);
    j.field("planned_measurements", static_cast<std::uint64_t>(t.planned));
    j.field("finished_measurements", static_cast<std::uint64_t>(t.finished));
    j.field("verification_failed", t.verification_failed);
    j.field("job_id", t.job_id).field("array_job_id", t.array_job_id).field("array_task_id", t.array_task_id);
    j.field("node_list", t.node_list).field("hostname", t.hostname).field("gpus", t.gpus);
    j.key("provenance");
    const YAML::Node p = child(t.results, "provenance");
    if (p.IsDefined()) emit(j, p);
    else j.null();
    j.key("calibration");
    const YAML::Node c = child(t.results, "calibration");
    if (c.IsDefined() && c.IsMap()) emit(j, c);
    else j.null();
    j.end_object();
  }
  j.end_array();
}

// The spaces the tasks calibrated (a twin's CPU and GPU jobs probe different spaces on different
// nodes), each as its first task measured it; each task's own block is in tasks[].calibration.
void write_calibration(JsonWriter& j, const MergedResults& merged) {
  j.key("calibration");
  std::vector<std::pair<std::string, std::size_t>> spaces;
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti)
    for (const auto& s : child(child(merged.tasks[ti].results, "calibration"), "spaces")) {
      const std::string name = s.first.Scalar();
      if (std::none_of(spaces.begin(), spaces.end(), [&](const auto& e) { return e.first == name; }))
        spaces.emplace_back(name, ti);
    }
  if (spaces.empty()) {
    j.null();
    return;
  }
  j.begin_object();
  j.key("spaces").begin_object();
  for (const auto& [name, ti] : spaces) {
    j.key(name);
    emit(j, child(child(merged.tasks[ti].results, "calibration"), "spaces")[name]);
  }
  j.end_object();
  j.key("from_task").begin_object();
  for (const auto& [name, ti] : spaces) j.field(name, static_cast<std::uint64_t>(ti));
  j.end_object();
  j.end_object();
}

// The first readable task's deck, with every case of every task once and the sizes the tasks ran
// between them.
void write_deck(JsonWriter& j, const MergedResults& merged, const MergedTask& first) {
  j.key("deck").begin_object();
  const YAML::Node deck = child(first.results, "deck");
  for (auto it = deck.begin(); it != deck.end(); ++it) {
    if (it->first.Scalar() == "cases") continue;
    j.key(it->first.Scalar());
    emit(j, it->second);
  }
  j.key("cases").begin_array();
  for (const std::string& name : merged.case_names) {
    const YAML::Node found = [&] {
      for (const MergedTask& t : merged.tasks)
        for (const YAML::Node& c : child(child(t.results, "deck"), "cases"))
          if (text(c, "name") == name) return c;
      return YAML::Node(YAML::NodeType::Undefined);
    }();
    if (!found.IsDefined()) continue;
    j.begin_object();
    for (auto it = found.begin(); it != found.end(); ++it) {
      j.key(it->first.Scalar());
      if (it->first.Scalar() == "sizes") {
        j.begin_array();
        for (const std::string& s : case_sizes(merged, name)) j.value(static_cast<std::uint64_t>(std::stoull(s)));
        j.end_array();
      } else {
        emit(j, it->second);
      }
    }
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

// Every task's measurements, each naming its task, case_index renumbered to the merged cases.
void write_measurements(JsonWriter& j, const MergedResults& merged) {
  j.key("measurements").begin_array();
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti)
    for (const YAML::Node& m : child(merged.tasks[ti].results, "measurements")) {
      j.begin_object();
      for (auto it = m.begin(); it != m.end(); ++it) {
        j.key(it->first.Scalar());
        if (it->first.Scalar() == "case_index") {
          const auto pos = std::find(merged.case_names.begin(), merged.case_names.end(), text(m, "case"));
          j.value(static_cast<std::uint64_t>(pos - merged.case_names.begin()));
        } else {
          emit(j, it->second);
        }
      }
      j.field("task", static_cast<std::uint64_t>(ti));
      j.end_object();
    }
  j.end_array();
}

}  // namespace

std::string merged_json(const MergedResults& merged, const std::vector<std::string>& command_line) {
  const MergedTask* first = nullptr;
  std::size_t planned = 0, finished = 0;
  std::string errors;
  for (const MergedTask& t : merged.tasks) {
    if (t.results.IsDefined() && !first) first = &t;
    planned += t.planned;
    finished += t.finished;
    if (t.status != "complete") errors += (errors.empty() ? "" : "; ") + t.directory + ": " + t.status + ": " + t.error;
  }
  JsonWriter j;
  j.begin_object();
  j.field("schema", kResultsSchema);
  j.field("status", merged.status);
  if (!errors.empty()) j.field("error", errors);
  j.field("planned_measurements", static_cast<std::uint64_t>(planned));
  j.field("finished_measurements", static_cast<std::uint64_t>(finished));
  j.key("merged").begin_object();
  j.array("command_line", command_line);
  j.field("date", now_iso8601());
  j.end_object();
  write_tasks(j, merged);
  write_calibration(j, merged);
  j.key("provenance");
  if (first) emit(j, child(first->results, "provenance"));
  else j.null();
  if (first) write_deck(j, merged, *first);
  write_measurements(j, merged);
  j.end_object();
  return j.str() + "\n";
}

// results.csv's rows with the index of their task (the order of merged.json's tasks) in front.
std::string merged_csv(const MergedResults& merged) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  std::ostringstream csv;
  csv << "task," << lines(to_csv(RunRecord{})).at(0) << '\n';
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti) {
    RunRecord r;
    for (const YAML::Node& m : child(merged.tasks[ti].results, "measurements")) r.measurements.push_back(measurement_from(m));
    const std::vector<std::string> rows = lines(to_csv(r));
    for (std::size_t i = 1; i < rows.size(); ++i) csv << ti << ',' << rows[i] << '\n';
  }
  return csv.str();
}

std::string merged_benchmark_json(const MergedResults& merged, const std::vector<std::string>& command_line) {
  return to_benchmark_json(record_of(merged, command_line));
}

}  // namespace miniapp
