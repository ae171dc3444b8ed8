#pragma once
// What the solver's two test files (test_solver.cpp, test_solver_dense.cpp) build their kernels with.

#include "miniapp/core/harness.hpp"
#include "miniapp/workloads/solver/solver.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace miniapp::testing::solver_tests {

inline std::vector<std::string> runnable_variants() {
  std::vector<std::string> names;
  for (const VariantInfo& v : solver::SolverWorkload::variants())
    if (v.unavailable_reason.empty()) names.push_back(v.name);
  return names;
}

inline MeasurementSpec solver_spec(MirrorPolicy policy) {
  MeasurementSpec s;
  s.policy = policy;
  s.warmup = 1;
  s.repetitions = 2;
  s.seed = 77;
  return s;
}

inline solver::Params params(std::size_t systems, int block_size = 4,
                             solver::MatrixKind kind = solver::MatrixKind::Random) {
  solver::Params p;
  p.systems = systems;
  p.block_size = block_size;
  p.matrix = kind;
  return p;
}

}  // namespace miniapp::testing::solver_tests
