#pragma once
// The matrix workload: its description (params.hpp) and its two problems, elementwise and GEMM,
// which hold different arrays.

#include "miniapp/core/kernel_choice.hpp"
#include "miniapp/workloads/matrix/elementwise.hpp"
#include "miniapp/workloads/matrix/gemm.hpp"
#include "miniapp/workloads/matrix/params.hpp"

namespace miniapp::matrix {

struct MatrixWorkload : Description {
  template <class Scalar, class Space>
  using Kernel = KernelChoice<Space, Elementwise<Scalar, Space>, Gemm<Scalar, Space>>;
};

}  // namespace miniapp::matrix
