#include "miniapp/record/provenance.hpp"

#include "miniapp/core/affinity.hpp"
#include "miniapp/core/build_info.hpp"
#include "miniapp/core/clock.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/core/spaces.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

extern char** environ;

#ifndef MINIAPP_VERSION
#define MINIAPP_VERSION "0.1.0"
#endif

namespace miniapp {

namespace {
bool recorded_variable(const std::string& name) {
  for (const char* prefix : {"OMP_", "KOKKOS_", "SLURM_", "GOMP_", "OPENBLAS_"})
    if (name.rfind(prefix, 0) == 0) return true;
  return name == "CUDA_VISIBLE_DEVICES" || name == "HIP_VISIBLE_DEVICES" || name == "ROCR_VISIBLE_DEVICES" ||
         name == "GPU_DEVICE_ORDINAL";  // Slurm's GPU index of the job on the node
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}
}  // namespace

Provenance collect_provenance(int argc, char** argv) {
  Provenance p;
  for (int i = 0; i < argc; ++i) p.command_line.emplace_back(argv[i]);
  p.miniapp_version = MINIAPP_VERSION;
  p.git_commit = git_commit();
#if defined(__clang__)
  p.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  p.compiler = "g++ " __VERSION__;
#else
  p.compiler = "unknown";
#endif
#ifdef MINIAPP_HOST_ARCH
  p.compiler += " -march=" MINIAPP_HOST_ARCH;
#endif
  p.kokkos_version = compat::kokkos_version();
  p.kokkos_kernels_version = compat::kokkos_kernels_version();
  if (Kokkos::is_initialized()) {
    std::ostringstream config;
    Kokkos::print_configuration(config, false);
    p.kokkos_configuration = config.str();
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.hostname = host;
  p.cpu_model = cpu_model();
  p.spaces_compiled = compiled_space_names();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos && recorded_variable(kv.substr(0, eq))) p.environment[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (Kokkos::is_initialized()) p.gpu = gpu_in_use(p.command_line);
  p.started = now_iso8601();
  return p;
}

std::string cpu_list(const cpu_set_t& set) {
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    list += (list.empty() ? "" : ",") + std::to_string(cpu) + (last > cpu ? "-" + std::to_string(last) : "");
    cpu = last;
  }
  return list;
}

RankPlace this_rank_place(const Provenance& p) {
  RankPlace place;
  place.rank = ranks::rank();
  place.local_rank = ranks::local_rank();
  place.hostname = p.hostname;
  place.cpus = cpu_list(process_cpus());
  place.host_threads = p.host_threads;
  if (p.gpu) {
    place.gpu_device = p.gpu->device_id;
    place.visible_devices = p.gpu->visible_devices;
  }
  return place;
}

std::vector<RankPlace> gather_rank_places(const RankPlace& mine) {
  // One line of tab-separated fields per rank (no field holds a tab or a newline).
  std::ostringstream line;
  line << mine.rank << '\t' << mine.local_rank << '\t' << mine.hostname << '\t' << mine.cpus << '\t'
       << mine.host_threads << '\t' << mine.gpu_device << '\t' << mine.visible_devices;
  std::vector<RankPlace> places;
  for (const std::string& text : ranks::gather(line.str())) {
    std::istringstream in(text);
    std::vector<std::string> f(7);
    for (std::string& field : f) std::getline(in, field, '\t');
    RankPlace r;
    r.rank = std::stoi(f[0]);
    r.local_rank = std::stoi(f[1]);
    r.hostname = f[2];
    r.cpus = f[3];
    r.host_threads = std::stoi(f[4]);
    r.gpu_device = std::stoi(f[5]);
    r.visible_devices = f[6];
    places.push_back(r);
  }
  return places;
}

}  // namespace miniapp
