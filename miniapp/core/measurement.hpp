#pragma once
// What one measurement (workload x variant x size x precision x space x policy) produced.

#include "miniapp/core/energy_reading.hpp"
#include "miniapp/core/mirror_policy.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace miniapp {

enum class Precision { Float32, Float64 };

constexpr const char* to_string(Precision p) { return p == Precision::Float32 ? "float32" : "float64"; }

// Bytes of one value of the precision.
constexpr std::size_t scalar_bytes(Precision p) { return p == Precision::Float32 ? sizeof(float) : sizeof(double); }

// Where the inputs are generated: on the host and then copied (the bounce-buffer case of seed
// 001), or directly in the execution space's memory by a kernel.
enum class Generation { Host, Device };

constexpr const char* to_string(Generation g) { return g == Generation::Host ? "host" : "device"; }

// Work of one iteration, declared by the workload; the harness derives the rates.
struct WorkEstimate {
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
};

struct Verification {
  bool checked = false;
  bool passed = false;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double tolerance = 0;    // on the relative error
  std::string reference;   // what the result was compared with
  std::string detail;      // first wrong element, or what was checked
};

struct MeasurementSpec {
  std::size_t case_index = 0;
  std::string case_name;
  std::string workload;
  std::string variant;
  std::size_t size = 0;
  Precision precision = Precision::Float32;
  std::string space;
  MirrorPolicy policy = MirrorPolicy::Host;
  Generation generate = Generation::Host;
  int warmup = 1;
  int repetitions = 5;
  std::uint64_t seed = 42;
  bool verify = true;
  std::optional<double> tolerance;
  // The processes (MPI ranks) the measurement is split over, each computing its own part
  // (core/ranks.hpp); 1 without MPI.
  int ranks = 1;
};

// Seconds per repetition, phase by phase (warm-up excluded).
struct PhaseSamples {
  std::vector<double> to_device, compute, to_host, total;
  // The part of each compute sample spent exchanging data with the other MPI ranks (a kernel's
  // collectives, with the copies to and from the host they need); empty where compute exchanges
  // nothing.
  std::vector<double> communicate;
  double generate = 0;         // one-time input generation, where spec.generate says
  double setup_to_device = 0;  // one-time input copy of the resident policies
  double final_to_host = 0;    // one-time output copy of all-resident, for verification
};

// Under MPI, how far the ranks' own median seconds per iteration spread: the recorded samples
// are the slowest rank's, so a wide spread is time lost to imbalance.
struct RankSpread {
  struct Range {
    double min = 0, mean = 0, max = 0;
  };
  int ranks = 1;
  Range compute, total;
};

struct Measurement {
  MeasurementSpec spec;
  PhaseSamples seconds;
  std::size_t bytes_to_device_per_iteration = 0;
  std::size_t bytes_to_host_per_iteration = 0;
  std::size_t bytes_one_time = 0;
  bool mirrors_alias = false;  // host space: mirror is the device allocation, copies move nothing
  std::string host_mirrors;    // "alias", "pageable" or "pinned" (page-locked: copy-every-iteration-pinned)
  WorkEstimate work;
  Verification verification;
  // Device spaces only: the GPU's energy, power and utilisation over the timed repetitions (their
  // copies included, warm-up excluded), read through NVML; fields null with the reason where NVML
  // is missing. Empty on host spaces.
  std::optional<EnergyReading> gpu_energy;
  // Set where more than one rank measured.
  std::optional<RankSpread> rank_spread;
  // Evenly spaced output values, compared with the baseline space's (not written out).
  std::vector<double> output_sample;
};

}  // namespace miniapp
