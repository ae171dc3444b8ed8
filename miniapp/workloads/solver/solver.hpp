#pragma once
// The solver workload: its description (params.hpp) and its problems (problem.hpp).

#include "miniapp/workloads/solver/params.hpp"
#include "miniapp/workloads/solver/problem.hpp"

namespace miniapp::solver {

struct SolverWorkload : Description {
  template <class Scalar, class Space>
  using Kernel = solver::Kernel<Scalar, Space>;
};

}  // namespace miniapp::solver
