#pragma once
// The run loop's tests (unit/test_runner.cpp, mpi/test_mpi.cpp): a deck of one case and a plan of
// measurements of a stand-in workload, for a measure function the test supplies.

#include "miniapp/core/deck.hpp"
#include "miniapp/core/measurement.hpp"

#include <cstddef>
#include <vector>

namespace miniapp::testing {

inline Deck one_case_deck() {
  Deck deck;
  deck.cases.emplace_back();
  deck.cases[0].name = "case";
  return deck;
}

// `count` measurements of sizes 10, 11, ..., each split over `ranks`.
inline std::vector<MeasurementSpec> stand_in_plan(int count, int ranks = 1) {
  std::vector<MeasurementSpec> plan;
  for (int k = 0; k < count; ++k) {
    MeasurementSpec spec;
    spec.workload = "stand-in";
    spec.variant = "v";
    spec.size = static_cast<std::size_t>(10 + k);
    spec.ranks = ranks;
    plan.push_back(spec);
  }
  return plan;
}

}  // namespace miniapp::testing
