#include "miniapp/merge.hpp"

#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/json_writer.hpp"
#include "miniapp/core/report.hpp"
#include "miniapp/core/stats.hpp"

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

namespace {

constexpr const char* kSchema = "kokkos-miniapp-results/1";
constexpr int kIncomplete = 3;  // a task missing, unreadable, failed, interrupted or never finished

constexpr const char* kUsage = R"(usage: miniapp merge [options] DIR...

Collates results directories (each holding the results.json of one run: the tasks of a job
array, the CPU and GPU jobs of a twin, runs on different nodes) into one results set of the
same schema: results.json (with `tasks`: each directory's status, job, array task, node list
and GPUs), results.csv and benchmark.json, and a table on stdout. Names every directory whose
results are missing or unreadable, whose run failed, was interrupted (SIGTERM: scancel, the
time limit) or never finished (killed outright). A directory without results.json that holds a
thread sweep (threads-N/) contributes each of its runs.

options:
  -o, --output DIR    write the merged results set into DIR (default: print only)
      --side-by-side  one column per directory: for each case, variant, precision and size the
                      fastest space/policy and its median time, and the first directory's time
                      over each other's (a CPU/GPU twin: how much the GPU gains)
  -q, --quiet         no tables; the task summary only
  -h, --help          show this help and exit

exit codes:
  0  every directory's run is complete and verified
  1  a verification failed (everything complete)
  2  bad command line
  3  a directory's results are missing or unreadable, or its run failed, was interrupted or
     never finished; the others are merged all the same
)";

// yaml-cpp reads JSON (a subset of YAML 1.2); these accessors never throw on absent keys.
YAML::Node child(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node c = n[key];  // a missing key gives an invalid node, which throws when asked its type
  return c.IsDefined() ? c : YAML::Node(YAML::NodeType::Undefined);
}
std::string text(const YAML::Node& n, const char* key, const std::string& fallback = "") {
  const YAML::Node c = child(n, key);
  return c.IsScalar() ? c.Scalar() : fallback;
}
double number(const YAML::Node& n, const char* key) {
  const YAML::Node c = child(n, key);
  if (!c.IsScalar()) return 0;
  char* end = nullptr;
  const double v = std::strtod(c.Scalar().c_str(), &end);
  return end && *end == '\0' ? v : 0;
}
bool flag(const YAML::Node& n, const char* key) { return text(n, key) == "true"; }
std::vector<double> samples(const YAML::Node& seconds, const char* phase) {
  std::vector<double> out;
  const YAML::Node s = child(child(seconds, phase), "samples");
  if (s.IsSequence())
    for (const YAML::Node& v : s) out.push_back(v.IsScalar() ? std::strtod(v.Scalar().c_str(), nullptr) : 0.0);
  return out;
}
std::string environment(const YAML::Node& results, const char* name) {
  return text(child(child(results, "provenance"), "environment"), name);
}

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

std::vector<std::string> run_directories(const std::string& dir) {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(dir) / "results.json", ec) || !fs::is_directory(dir, ec)) return {dir};
  std::vector<std::pair<long, std::string>> sweep;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("threads-", 0) == 0 && fs::is_regular_file(e.path() / "results.json", ec))
      sweep.emplace_back(std::strtol(name.c_str() + 8, nullptr, 10), e.path().string());
  }
  if (sweep.empty()) return {dir};
  std::sort(sweep.begin(), sweep.end());
  std::vector<std::string> out;
  for (const auto& s : sweep) out.push_back(s.second);
  return out;
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
    t.results.reset(YAML::LoadFile(file.string()));
  } catch (const YAML::Exception& e) {
    t.status = "unreadable";
    t.error = file.string() + ":" + std::to_string(e.mark.line + 1) + ": not valid JSON: " + e.msg;
    return t;
  }
  if (text(t.results, "schema") != kSchema) {
    t.status = "unreadable";
    t.error = file.string() + " is not a results file of schema " + kSchema;
    t.results.reset(YAML::Node(YAML::NodeType::Undefined));
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

std::string task_label(const MergedTask& t, std::size_t index) {
  std::string label = "[" + std::to_string(index + 1) + "] " + t.directory;
  if (!t.array_task_id.empty()) label += " (array job " + t.array_job_id + " task " + t.array_task_id + ")";
  else if (!t.job_id.empty()) label += " (job " + t.job_id + ")";
  return label;
}

std::string milliseconds(double seconds) {
  const double ms = seconds * 1e3;
  std::ostringstream s;
  s << std::fixed << std::setprecision(ms < 1 ? 4 : ms < 10 ? 3 : 1) << ms;
  return s.str();
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
  j.field("schema", kSchema);
  j.field("status", merged.status);
  if (!errors.empty()) j.field("error", errors);
  j.field("planned_measurements", static_cast<std::uint64_t>(planned));
  j.field("finished_measurements", static_cast<std::uint64_t>(finished));
  j.key("merged").begin_object();
  j.array("command_line", command_line);
  j.field("date", now_iso8601());
  j.end_object();
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
  // The spaces the tasks calibrated (a twin's CPU and GPU jobs probe different spaces on different
  // nodes), each as its first task measured it; each task's own block is in tasks[].calibration.
  j.key("calibration");
  {
    std::vector<std::pair<std::string, std::size_t>> spaces;
    for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti)
      for (const auto& s : child(child(merged.tasks[ti].results, "calibration"), "spaces")) {
        const std::string name = s.first.Scalar();
        if (std::none_of(spaces.begin(), spaces.end(), [&](const auto& e) { return e.first == name; }))
          spaces.emplace_back(name, ti);
      }
    if (spaces.empty()) {
      j.null();
    } else {
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
  }
  j.key("provenance");
  if (first) emit(j, child(first->results, "provenance"));
  else j.null();
  if (first) {
    j.key("deck").begin_object();
    const YAML::Node deck = child(first->results, "deck");
    for (auto it = deck.begin(); it != deck.end(); ++it) {
      if (it->first.Scalar() == "cases") continue;
      j.key(it->first.Scalar());
      emit(j, it->second);
    }
    // Every case of every task, once, with the sizes the tasks ran between them.
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

void print_task_summary(std::ostream& os, const MergedResults& merged) {
  std::map<std::string, int> counts;
  for (const MergedTask& t : merged.tasks) ++counts[t.status];
  os << merged.tasks.size() << " task(s):";
  bool first = true;
  for (const auto& [status, n] : counts) {
    os << (first ? " " : ", ") << n << " " << status;
    first = false;
  }
  os << "\n";
  for (std::size_t i = 0; i < merged.tasks.size(); ++i) {
    const MergedTask& t = merged.tasks[i];
    os << "  " << task_label(t, i) << ": " << t.status;
    if (t.status == "complete") os << ", " << t.finished << " measurements";
    if (!t.error.empty()) os << ": " << t.error;
    if (t.verification_failed) os << "; VERIFICATION FAILED";
    if (!t.node_list.empty()) os << "; node " << t.node_list;
    if (!t.gpus.empty()) os << "; GPUs " << t.gpus;
    os << "\n";
  }
}

void print_merged_table(std::ostream& os, const MergedResults& merged) {
  os << std::left << std::setw(5) << "task" << std::setw(18) << "case" << std::setw(22) << "variant" << std::setw(9)
     << "precision" << std::right << std::setw(9) << "size" << "  " << std::left << std::setw(8) << "space"
     << std::setw(22) << "policy" << std::setw(7) << "inputs" << std::right << std::setw(11) << "total ms"
     << std::setw(9) << "GFLOP/s" << std::setw(8) << "GB/s" << std::setw(9) << "speedup" << "  verified\n";
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti)
    for (const YAML::Node& m : child(merged.tasks[ti].results, "measurements")) {
      const YAML::Node v = child(m, "verification");
      const YAML::Node work = child(m, "work");
      const double s = number(m, "speedup");
      std::ostringstream speed;
      if (s > 0) speed << std::fixed << std::setprecision(2) << s << "x";
      else speed << "-";
      os << std::left << std::setw(5) << ti + 1 << std::setw(18) << text(m, "case") << std::setw(22)
         << text(m, "variant") << std::setw(9) << text(m, "precision") << std::right << std::setw(9)
         << text(m, "size") << "  " << std::left << std::setw(8) << text(m, "space") << std::setw(22)
         << text(m, "policy") << std::setw(7) << text(m, "generate") << std::right << std::setw(11)
         << milliseconds(number(child(child(m, "seconds"), "total"), "median")) << std::setw(9) << std::fixed
         << std::setprecision(2) << number(work, "GFLOPs") << std::setw(8) << number(work, "GBps")
         << std::defaultfloat << std::setw(9) << speed.str() << "  "
         << (!flag(v, "checked") ? "unchecked" : flag(v, "passed") ? "pass" : "FAIL") << "\n";
    }
}

void print_side_by_side(std::ostream& os, const MergedResults& merged) {
  struct Best {
    double seconds = 0;
    std::string where;
  };
  using Key = std::vector<std::string>;  // case, variant, precision, size, generate
  std::vector<Key> keys;
  std::map<Key, std::map<std::size_t, Best>> best;
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti)
    for (const YAML::Node& m : child(merged.tasks[ti].results, "measurements")) {
      const Key key = {text(m, "case"), text(m, "variant"), text(m, "precision"), text(m, "size"), text(m, "generate")};
      const double t = number(child(child(m, "seconds"), "total"), "median");
      if (t <= 0) continue;
      if (!best.count(key)) keys.push_back(key);
      Best& b = best[key][ti];
      if (b.seconds == 0 || t < b.seconds) b = {t, text(m, "space") + "/" + text(m, "policy")};
    }
  os << "side by side: the fastest space/policy of each run and its median time per iteration; "
        "ratio = [1]'s time / the run's\n";
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti) {
    const MergedTask& t = merged.tasks[ti];
    os << "  " << task_label(t, ti) << ": " << t.status;
    const YAML::Node p = child(t.results, "provenance");
    if (p.IsDefined()) {
      const std::string threads = text(p, "host_threads", "?");
      os << ", " << threads << (threads == "1" ? " host thread" : " host threads");
      const YAML::Node gpu = child(p, "gpu");
      if (gpu.IsMap()) os << ", GPU " << text(gpu, "space") << " " << text(gpu, "name");
      else if (!t.gpus.empty()) os << ", Slurm GPUs " << t.gpus << " (binary without a GPU space)";
      else os << ", no GPU";
    }
    os << "\n";
  }
  os << std::left << std::setw(18) << "case" << std::setw(22) << "variant" << std::setw(10) << "precision"
     << std::right << std::setw(9) << "size" << "  " << std::left << std::setw(7) << "inputs";
  for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti) {
    os << std::right << std::setw(12) << "[" + std::to_string(ti + 1) + "] ms" << "  " << std::left << std::setw(26)
       << "where";
    if (ti > 0) os << std::right << std::setw(8) << "ratio";
  }
  os << "\n";
  for (const Key& key : keys) {
    os << std::left << std::setw(18) << key[0] << std::setw(22) << key[1] << std::setw(10) << key[2] << std::right
       << std::setw(9) << key[3] << "  " << std::left << std::setw(7) << key[4];
    const auto& row = best[key];
    const auto first = row.find(0);
    for (std::size_t ti = 0; ti < merged.tasks.size(); ++ti) {
      const auto it = row.find(ti);
      if (it == row.end()) os << std::right << std::setw(12) << "-" << "  " << std::left << std::setw(26) << "";
      else os << std::right << std::setw(12) << milliseconds(it->second.seconds) << "  " << std::left << std::setw(26)
              << it->second.where;
      if (ti > 0) {
        std::ostringstream ratio;
        if (it != row.end() && first != row.end())
          ratio << std::fixed << std::setprecision(2) << first->second.seconds / it->second.seconds << "x";
        else ratio << "-";
        os << std::right << std::setw(8) << ratio.str();
      }
    }
    os << "\n";
  }
}

int run_merge(int argc, char** argv) {
  std::vector<std::string> directories;
  std::string output;
  bool side_by_side = false, quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return exit_code::kAllVerified;
    } else if (a == "--side-by-side") side_by_side = true;
    else if (a == "-q" || a == "--quiet") quiet = true;
    else if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) {
        std::cerr << "miniapp merge: " << a << " needs a directory\n";
        return exit_code::kBadInput;
      }
      output = argv[++i];
    } else if (a.rfind("--output=", 0) == 0) output = a.substr(9);
    else if (!a.empty() && a[0] == '-') {
      std::cerr << "miniapp merge: unknown option '" << a << "' (see miniapp merge --help)\n";
      return exit_code::kBadInput;
    } else directories.push_back(a);
  }
  if (directories.empty()) {
    std::cerr << "miniapp merge: no results directory given (see miniapp merge --help)\n";
    return exit_code::kBadInput;
  }
  const MergedResults merged = merge_directories(directories);
  std::vector<std::string> command_line = {"miniapp"};
  for (int i = 0; i < argc; ++i) command_line.emplace_back(argv[i]);

  print_task_summary(std::cout, merged);
  const bool any_results = std::any_of(merged.tasks.begin(), merged.tasks.end(),
                                       [](const MergedTask& t) { return t.results.IsDefined(); });
  if (!quiet && any_results) {
    std::cout << "\n";
    if (side_by_side) print_side_by_side(std::cout, merged);
    else print_merged_table(std::cout, merged);
  }
  if (!output.empty() && any_results) {
    try {
      fs::create_directories(output);
      write_atomically((fs::path(output) / "results.json").string(), merged_json(merged, command_line));
      write_atomically((fs::path(output) / "results.csv").string(), merged_csv(merged));
      write_atomically((fs::path(output) / "benchmark.json").string(), merged_benchmark_json(merged, command_line));
    } catch (const std::exception& e) {
      std::cerr << "miniapp merge: " << e.what() << "\n";
      return kIncomplete;
    }
    std::cout << "\nmerged results: " << (fs::path(output) / "results.json").string() << "\n";
  }
  if (merged.status != "complete") {
    std::cerr << "miniapp merge: not every task is complete (status " << merged.status << ")\n";
    return kIncomplete;
  }
  const bool failed = std::any_of(merged.tasks.begin(), merged.tasks.end(),
                                  [](const MergedTask& t) { return t.verification_failed; });
  return failed ? exit_code::kVerificationFailed : exit_code::kAllVerified;
}

}  // namespace miniapp
