#pragma once
// The calibration probe: what each execution space can do at best on this machine, measured in a
// few seconds before a run, so that every measurement can be placed against it (its roofline
// bound and the fraction of that bound it reached) and the advisor can reason from measured
// figures instead of assumed ones. Cached per output directory (calibration.json).
//
// Per space: memory bandwidth (BabelStream's copy and triad), the vendor GEMM rate through Kokkos
// Kernels per precision, kernel launch latency, and on device spaces the host<->device link,
// pageable and pinned, both directions.

#include "miniapp/core/json_writer.hpp"
#include "miniapp/core/measurement.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::calibration {

// How much each probe moves or computes. The defaults are sized to leave the caches (the stream
// arrays are far above any L3 or GPU L2) while keeping the whole probe to seconds.
struct ProbeSizes {
  std::size_t stream_values = 0;  // doubles per stream array (three arrays)
  int gemm_max_n = 0;             // GEMM grows from 256 until one call takes gemm_target_seconds
  double gemm_target_seconds = 0.02;
  std::size_t link_bytes = 0;     // per host<->device copy
  int launches = 200;             // empty kernels timed for the launch latency
  int repetitions = 5;            // stream kernels and copies: the best of these
};
ProbeSizes default_sizes(bool host_space);

struct Link {
  double pageable_to_device = 0, pageable_to_host = 0, pinned_to_device = 0, pinned_to_host = 0;  // GB/s
};

struct SpaceCalibration {
  std::string space;
  bool host = true;
  double copy_GBps = 0, triad_GBps = 0;  // the space's own kernels, best of the repetitions
  // The same copy through Kokkos::deep_copy, which hands contiguous device arrays to the vendor's
  // device-to-device copy (cudaMemcpyAsync, hipMemcpyAsync); 0 in a cache file written before it
  // was measured.
  double vendor_copy_GBps = 0;
  std::size_t stream_bytes = 0;          // per array
  std::map<std::string, double> gemm_GFLOPs;  // by precision name
  std::map<std::string, int> gemm_n;
  double launch_latency_us = 0;  // median of one empty kernel plus its fence
  std::optional<Link> link;      // device spaces only
  double seconds = 0;            // the probe's own run time
  std::string measured_at;       // ISO 8601, UTC
  std::string verified;          // what was checked of the probe's own results
};

// What a calibration is valid for: a cached one is reused only where all of these agree.
struct Key {
  std::string git_commit, hostname, cpu_model, kokkos_version, gpu_pci_bus_id;
  int host_threads = 0, cpus_allowed = 0;
  bool operator==(const Key& o) const;
};

struct Calibration {
  Key key;
  std::vector<SpaceCalibration> spaces;  // in the order probed
  std::map<std::string, std::string> reused_from;  // space -> the cache file it was taken from
  const SpaceCalibration* find(const std::string& space) const;
};

// A probe whose own result is wrong: the space cannot be trusted, so nothing runs on it.
struct ProbeFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Probes one compiled space (by deck name). Throws ProbeFailed on a wrong result and Interrupted
// on a signal between steps.
SpaceCalibration probe(const std::string& space, const ProbeSizes& sizes);

// Where a calibration may come from besides a new probe, in this order: the output directory's
// calibration.json (any age: the run that wrote it measured there), then the machine-wide cache
// (default_machine_cache(), entries younger than max_age_seconds), so that many short runs on one
// machine probe once. A file that cannot be read or was made for another key is ignored, with a
// line on `log` saying why.
struct CacheFiles {
  std::string output;   // <output directory>/calibration.json, always written
  std::string machine;  // empty: none
  double max_age_seconds = 24 * 3600;
};

// $MINIAPP_CALIBRATION_CACHE, else $XDG_CACHE_HOME/kokkos-miniapp, else ~/.cache/kokkos-miniapp,
// plus a file name of the host and the key's hash; empty when no directory can be named.
std::string default_machine_cache(const Key& key);

// Reuses cached spaces for `key`, probes the others (a progress line per space on `log`, nullptr:
// silent), writes the output file and, after a probe, the machine file. `sizes`: the probe sizes
// for every space (tests); by default default_sizes() of each space. `fresh`: probe every space.
Calibration calibrate(const std::vector<std::string>& spaces, const Key& key, const CacheFiles& files,
                      std::ostream* log, const std::optional<ProbeSizes>& sizes = std::nullopt, bool fresh = false);

void write_json(JsonWriter& j, const Calibration& c);
// The cache file's content: the block results.json carries, plus its schema line.
std::string to_cache_json(const Calibration& c);
// Parses a cache file; nothing (and the reason in `why`) when it is not one.
std::optional<Calibration> from_cache_json(const std::string& text, std::string& why);

// Where one measurement stands under its space's roofs: the bound min(peak, bandwidth x intensity)
// for its arithmetic intensity (flops per byte the workload declares), and the fraction of it the
// median compute time reached.
struct RooflinePlace {
  double intensity = 0;       // flops per byte
  double bound_GFLOPs = 0;
  double fraction = 0;
  std::string limited_by;     // "memory" or "compute"
  double bandwidth_GBps = 0;  // the roofs used
  std::string bandwidth_from; // which stream measurement gave the bandwidth: "copy", "triad" or "vendor copy"
  double peak_GFLOPs = 0;
};
std::optional<RooflinePlace> place(const SpaceCalibration& c, Precision precision, const WorkEstimate& work,
                                   double compute_seconds);

// The memory roof of a space: the highest of its stream measurements, and which one it was.
std::pair<double, std::string> memory_roof(const SpaceCalibration& c);

}  // namespace miniapp::calibration
