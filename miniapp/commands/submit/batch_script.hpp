#pragma once
// The batch script of one job: a site profile's directives filled in with the job's numbers, and
// a body that gives the mini-app one thread per CPU of the task, runs it through the site's
// launcher into a per-job results directory, samples the GPU while it runs, and passes Slurm's
// SIGTERM on so that finished measurements are kept.

#include "miniapp/commands/submit/site_profile.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace miniapp::submit {

// A request the profile cannot satisfy (more GPUs than a node has, ...); the message says why.
struct ResourceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct JobPlan {
  JobKind kind = JobKind::Cpu;
  std::string job_name;
  std::optional<std::string> account;    // replaces the profile's
  std::optional<std::string> partition;  // replaces the profile's
  std::optional<int> cpus, gpus;         // replace the profile's
  int ranks = 1;                         // MPI ranks on the node (a GPU job: one GPU each)
  std::optional<std::string> time;       // replaces the profile's
  std::string binary;                    // absolute path of the mini-app the job runs
  std::string deck;                      // absolute path of the deck
  std::string results_root;              // absolute; the job writes <results_root>/<results_name>-<job id>
  std::string results_name;
  std::vector<std::string> miniapp_args;              // more options for every run (e.g. --spaces)
  std::vector<std::vector<std::string>> array_groups;  // a job array: task i runs with array_groups[i]
  std::optional<int> throttle;                         // at most this many tasks at once (--array=...%N)
  std::vector<std::string> comment;                    // header lines (what, from where, when)
};

// The job's numbers after the profile's defaults, the command line and the per-GPU scaling.
struct Resources {
  int cpus = 1;  // 0: every CPU of the machine (scheduler: none)
  int gpus = 0;
  std::optional<std::string> memory;
  std::optional<std::string> partition;
  std::string time;
};
Resources resolve_resources(const SiteProfile& site, const JobPlan& plan);

// "64G" x 2 = "128G"; "0" stays "0" (all of a node's memory).
std::string scale_memory(const std::string& memory, int factor);

// The #SBATCH options of the job, in order, without the "#SBATCH " prefix.
std::vector<std::string> sbatch_directives(const SiteProfile& site, const JobPlan& plan);

std::string batch_script(const SiteProfile& site, const JobPlan& plan);

// A job that runs `miniapp merge` over finished jobs' directories (submitted with a dependency).
struct MergePlan {
  std::string job_name;
  std::optional<std::string> account;
  std::string binary;
  std::vector<std::string> directories;
  std::string output;
  bool side_by_side = false;
  std::string results_root;
  std::vector<std::string> comment;
};
std::string merge_script(const SiteProfile& site, const MergePlan& plan);

// Quotes for bash when needed: plain words stay as they are.
std::string shell_quote(const std::string& s);

}  // namespace miniapp::submit
