#pragma once
// A site profile: what one Slurm site needs in a job script (partitions, the site's spelling of a
// GPU request, CPUs and memory per GPU, the launcher, the GPU backend and monitor), read from a
// YAML file a user copies and edits (sites/*.yaml). Problems are reported as the deck's are:
// file:line:column: key.path: message.

#include "miniapp/core/diagnostics.hpp"

#include <optional>
#include <string>
#include <vector>

namespace miniapp::submit {

enum class JobKind { Cpu, Gpu };
inline const char* to_string(JobKind k) { return k == JobKind::Cpu ? "cpu" : "gpu"; }

// How a site wants one kind of job asked for.
struct JobShape {
  std::optional<std::string> partition;  // none: the site's default (or routing by --time)
  // #SBATCH options, with {cpus}, {gpus} and {memory} replaced by the job's numbers.
  std::vector<std::string> request;
  int cpus = 1;                       // CPU jobs: CPUs; GPU jobs: CPUs per GPU (0: every CPU, local only)
  std::optional<std::string> memory;  // CPU jobs: memory; GPU jobs: memory per GPU ("64G", "8000M", "0")
  // GPU jobs only
  int gpus = 1;           // GPUs asked for unless the command line says otherwise
  int gpus_per_node = 1;  // the most one job may ask for (one node)
  std::optional<int> more_gpus_above;  // above this many GPUs the job goes to more_gpus_partition
  std::string more_gpus_partition;
  std::optional<std::string> backend;  // cuda | hip: what the binary must have for the GPU to be used
  std::optional<std::string> monitor;  // sampled while the job runs (nvidia-smi, rocm-smi)
  int monitor_interval = 10;           // seconds
  std::optional<std::string> energy_before, energy_after;  // e.g. LUMI's gpu-energy --save / --diff
};

struct SiteProfile {
  std::string file;  // where it was read from
  std::string name;  // the file's name without .yaml
  std::string description;
  bool slurm = true;  // scheduler: slurm | none (local: the script runs here)
  std::optional<std::string> account;
  int account_line = 0;
  std::string time;    // default --time
  std::string output;  // --output pattern in the results directory (%j, %x, %A, %a)
  std::vector<std::string> launcher;    // e.g. [srun]; empty: the binary runs directly
  std::vector<std::string> directives;  // more #SBATCH options for every job
  std::optional<JobShape> cpu, gpu;

  const std::optional<JobShape>& shape(JobKind k) const { return k == JobKind::Cpu ? cpu : gpu; }
};

// An account still holding the shipped placeholder (<project>, <allocation>, def-<group>).
bool is_placeholder(const std::string& account);

struct ProfileResult {
  std::optional<SiteProfile> profile;
  Diagnostics diagnostics;
};
ProfileResult load_site_profile_text(const std::string& text, const std::string& file);
ProfileResult load_site_profile_file(const std::string& path);

// Where profiles are looked up: --sites-dir, else $MINIAPP_SITES_DIR, else the sites/ folder
// installed next to the binary (../share/miniapp/sites), else the source tree's.
std::vector<std::string> site_directories(const std::string& sites_dir_option);
// The profile names (file stems) found in those directories, sorted.
std::vector<std::string> known_sites(const std::vector<std::string>& directories);
// NAME's file in the first directory that has it; a path (with '/' or ending in .yaml) as given.
std::optional<std::string> find_site(const std::string& name, const std::vector<std::string>& directories);

}  // namespace miniapp::submit
