#pragma once
// The regression workload: its description (params.hpp) and its problem (problem.hpp).

#include "miniapp/workloads/regression/params.hpp"
#include "miniapp/workloads/regression/problem.hpp"

namespace miniapp::regression {

struct RegressionWorkload : Description {
  template <class Scalar, class Space>
  using Kernel = regression::Kernel<Scalar, Space>;
};

}  // namespace miniapp::regression
