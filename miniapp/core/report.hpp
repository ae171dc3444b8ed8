#pragma once
// Results of a run: the provenance record, the JSON and CSV files (rewritten atomically after
// every measurement, so a killed job keeps what finished) and the console tables.

#include "miniapp/calibration/calibration.hpp"
#include "miniapp/core/deck.hpp"
#include "miniapp/core/device_info.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/stats.hpp"

#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace miniapp {

struct Provenance {
  std::vector<std::string> command_line;
  std::string miniapp_version, git_commit, compiler, kokkos_version, kokkos_kernels_version;
  std::string kokkos_configuration;  // Kokkos::print_configuration
  std::string hostname, cpu_model;
  std::vector<std::string> spaces_compiled;
  std::map<std::string, std::string> environment;  // OMP_*, KOKKOS_*, SLURM_*, *_VISIBLE_DEVICES
  int host_threads = 0;              // concurrency of the default host execution space
  std::string host_threads_source;   // command line, deck, SLURM_CPUS_PER_TASK, environment, default
  int cpus_allowed = 0;              // CPUs in this process's affinity mask
  std::string started, finished;  // ISO 8601, UTC
  std::optional<GpuInfo> gpu;     // the GPU in use and how it was chosen, where one is compiled in
};

Provenance collect_provenance(int argc, char** argv);
std::string now_iso8601();
// Local time as YYYYmmdd-HHMMSS, for the names of new output directories and job files.
std::string local_timestamp();

struct RunRecord {
  Provenance provenance;
  const Deck* deck = nullptr;
  std::string status = "running";  // running | complete | interrupted | failed
  std::string error;
  std::size_t planned = 0;
  std::vector<Measurement> measurements;
  // What each space can do at best (the calibration probe); empty with the reason when skipped.
  std::optional<calibration::Calibration> calibration;
  std::string calibration_skipped;
};

// Where m stands under its space's calibrated roofs; nothing without a calibration of its space.
std::optional<calibration::RooflinePlace> roofline(const RunRecord& run, const Measurement& m);

// Median-based rates of one measurement.
struct Rates {
  double seconds_per_iteration = 0;  // median total
  double gflops = 0, gbytes_per_s = 0, transfer_gbytes_per_s = 0;
};
Rates rates(const Measurement& m);

// Speedup of m over its case's baseline space: same variant, precision, size and policy, else
// the baseline's host-policy run. Zero when the baseline has not run.
double speedup(const RunRecord& run, const Measurement& m);

// Largest difference between this measurement's sampled outputs and the baseline space's (same
// variant, precision, size and input generation); nothing when there is no baseline result yet.
struct Difference {
  double max_abs = 0;
  double max_rel = 0;  // relative to the largest baseline magnitude
};
std::optional<Difference> difference_from_baseline(const RunRecord& run, const Measurement& m);

std::string to_json(const RunRecord& run);
std::string to_csv(const RunRecord& run);
// Google Benchmark's JSON layout, one benchmark per measurement, for compare.py.
std::string to_benchmark_json(const RunRecord& run);

// A results file that could not be written: the path, the step and the system's error.
struct WriteError : std::runtime_error {
  WriteError(const std::string& path, const std::string& what, int error_number);
  std::string path;
};

// Writes and fsyncs path.tmp, renames it over path and fsyncs the directory: a reader never sees
// a half-written file, and a failed write (full disk, file size limit) leaves the previous file
// in place and throws WriteError.
void write_atomically(const std::string& path, const std::string& content);

void print_case_table(std::ostream& os, const RunRecord& run, std::size_t case_index);

}  // namespace miniapp
