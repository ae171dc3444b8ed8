#pragma once
// The definitions of the solver's problem classes (problem.hpp) that launch kernels: included
// only by the units CMake generates per compiled space (instances.hpp), which instantiate them
// once. Tests, benchmarks and the MPI test include problem.hpp and link to those instances
// instead of compiling every variant's kernels again.

#include "miniapp/core/interruption.hpp"
#include "miniapp/workloads/solver/blocked_lu.hpp"
#include "miniapp/workloads/solver/kernels.hpp"
#include "miniapp/workloads/solver/problem.hpp"
#include "miniapp/workloads/solver/reference.hpp"
#include "miniapp/workloads/solver/vendor.hpp"

namespace miniapp::solver {

template <class Scalar, class Space>
void Systems<Scalar, Space>::generate_inputs(std::uint64_t seed) {
  generate_on_host(matrix_, a_.host, b_.host, seed, first_);
}

template <class Scalar, class Space>
void Systems<Scalar, Space>::generate_inputs_on_device(const Space& space, std::uint64_t seed) {
  generate(space, matrix_, a_.device, b_.device, seed, first_);
}

template <class Scalar, class Space>
Verification Systems<Scalar, Space>::verify(std::optional<double> tolerance) const {
  return verify_systems<Scalar>(a_.host, b_.host, x_.host, info_.host, tolerance, first_);
}

template <class Scalar, class Space>
void Batched<Scalar, Space>::compute(const Space& space) {
  const auto& a = this->a_.device;
  const auto& b = this->b_.device;
  const auto& x = this->x_.device;
  const auto& info = this->info_.device;
  switch (variant_) {
    case Variant::BatchedTeam: return batched_team(space, a, b, x, info);
    case Variant::BatchedKokkosKernels: return batched_kokkos_kernels(space, a, b, x, info, lu_, pivots_);
    default: return batched_thread(space, a, b, x, info, lu_, rhs_);
  }
}

template <class Scalar, class Space>
void DenseBlocked<Scalar, Space>::compute(const Space& space) {
  std::int64_t step = 0;
  for (std::size_t s = 0; s < this->a_.device.extent(0); ++s) {
    work_.system = static_cast<int>(s);
    blocked::solve_system(space, work_, this->a_.device, this->b_.device, this->x_.device, block_size_, step);
  }
}

template <class Scalar, class Space>
void DenseVendor<Scalar, Space>::compute(const Space& space) {
  for (std::size_t s = 0; s < this->a_.device.extent(0); ++s) {
    interruption_point(space, static_cast<std::int64_t>(s));
    const int system = static_cast<int>(s);
    const auto& x = this->x_.device;
    vendor::copy_in(space, this->a_.device, this->b_.device, x, lu_, scale_, system);
    vendor_lu_.factor(space, lu_.data());
    vendor::find_tiny_pivot(space, lu_, scale_, first_tiny_);
    vendor_lu_.solve(space, lu_.data(), x.data() + s * x.extent(1));
    vendor::record_pivot(space, x, this->info_.device, first_tiny_, system);
  }
}

}  // namespace miniapp::solver
