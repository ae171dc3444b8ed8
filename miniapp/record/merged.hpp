#pragma once
// Several runs' results directories (the tasks of a job array, the CPU and GPU jobs of a twin)
// as one results set of the same schema, and every task that is missing, failed, was interrupted
// or never finished. `miniapp merge` (commands/merge) prints and writes it.

#include <yaml-cpp/yaml.h>

#include <iosfwd>
#include <string>
#include <vector>

namespace miniapp {

struct MergedTask {
  std::string directory;
  std::string status;  // missing | unreadable | running | complete | interrupted | failed
  std::string error;   // why, for anything but complete
  YAML::Node results{YAML::NodeType::Undefined};  // the task's results.json (undefined when missing or unreadable)
  std::size_t planned = 0, finished = 0;
  bool verification_failed = false;
  // From the provenance: where and as what it ran.
  std::string job_id, array_job_id, array_task_id, node_list, gpus, hostname;
};

struct MergedResults {
  std::vector<MergedTask> tasks;
  std::vector<std::string> case_names;  // every case of every task, in order of first appearance
  std::string status;                   // complete only when every task is
};

// Reads DIR/results.json for every directory (a thread sweep's DIR/threads-N/results.json when
// DIR itself has none).
MergedResults merge_directories(const std::vector<std::string>& directories);

// The merged results.json: the schema of a run's, with `tasks` added and each measurement naming
// its task; provenance and deck are the first readable task's.
std::string merged_json(const MergedResults& merged, const std::vector<std::string>& command_line);
std::string merged_csv(const MergedResults& merged);
std::string merged_benchmark_json(const MergedResults& merged, const std::vector<std::string>& command_line);

}  // namespace miniapp
