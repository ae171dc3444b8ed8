#pragma once
// The record of one run: provenance, the deck as read, every measurement and the calibration;
// what is derived from it (rates, speedups, differences, roofline places). Written by
// record/writers.hpp, merged by record/merged.hpp, printed by record/console.hpp.

#include "miniapp/calibration/calibration.hpp"
#include "miniapp/core/deck.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/record/provenance.hpp"

#include <optional>
#include <string>
#include <vector>

namespace miniapp {

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
  // --kernel-times: Kokkos fenced after every kernel, so launch-bound phases ran slower.
  bool kernels_fenced = false;
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

}  // namespace miniapp
