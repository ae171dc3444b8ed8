#include "miniapp/commands/commands.hpp"
#include "miniapp/commands/merge/merge.hpp"

#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/options.hpp"
#include "miniapp/record/merged.hpp"
#include "miniapp/record/reader.hpp"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace miniapp {

using namespace results;

namespace {

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
  bool help = false;
  try {
    OptionParser()
        .flag("-h,--help", [&] { help = true; })
        .flag("--side-by-side", [&] { side_by_side = true; })
        .flag("-q,--quiet", [&] { quiet = true; })
        .value("-o,--output", [&](const std::string& v) { output = v; })
        .operands([&](const std::string& d) { directories.push_back(d); })
        .parse(argc, argv);
    if (!help && directories.empty()) throw UsageError("no results directory given");
  } catch (const UsageError& e) {
    return usage_error("miniapp merge", e);
  }
  if (help) {
    std::cout << kUsage;
    return exit_code::kAllVerified;
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
