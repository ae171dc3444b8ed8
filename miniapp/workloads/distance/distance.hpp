#pragma once
// The distance workload: its description (params.hpp) and its problem (problem.hpp).

#include "miniapp/workloads/distance/params.hpp"
#include "miniapp/workloads/distance/problem.hpp"

namespace miniapp::distance {

struct DistanceWorkload : Description {
  template <class Scalar, class Space>
  using Kernel = distance::Kernel<Scalar, Space>;
};

}  // namespace miniapp::distance
