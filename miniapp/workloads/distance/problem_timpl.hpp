#pragma once
// The definitions of the distance Kernel's members that launch kernels or compute the reference
// (problem.hpp): included only by the units CMake generates per compiled space (instances.hpp),
// which instantiate them once. Tests and benchmarks include problem.hpp and link to those
// instances instead of compiling the kernels again.

#include "miniapp/workloads/distance/problem.hpp"

namespace miniapp::distance {

template <class Scalar, class Space>
void Kernel<Scalar, Space>::generate_inputs(std::uint64_t seed) {
  kernels::generate_on_host(points_.host, seed);
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::generate_inputs_on_device(const Space& space, std::uint64_t seed) {
  kernels::generate(space, points_.device, seed);
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::compute(const Space& space) {
  const int dim = params_.dim;
  const bool squared = params_.squared;
  if (reads_coordinates()) kernels::coordinate_major(space, points_.device, coordinates_, dim);
  const auto first = static_cast<std::int64_t>(rows_.first), own = static_cast<std::int64_t>(own_rows());
  if (params_.output == Output::RowMin)
    return kernels::row_min(space, coordinates_, nearest_.device, nearest_index_.device, dim, squared, first, own);
  if (params_.output == Output::RowSum)
    return kernels::row_sum(space, coordinates_, row_sums_.device, dim, squared, first, own);
  if (variant_ == Variant::Gemm) kernels::squared_norms(space, points_.device, norms_, dim);
  if (!plan_.chunked) {
    if (variant_ == Variant::Symmetric && !split())
      return kernels::symmetric(space, coordinates_, distances_.device, dim, squared);
    return compute_rows(space, distances_.device, first, own);
  }
  // Chunked: each block is computed into a buffer in the space and copied to the host output
  // here, inside compute, on the same instance (so in order). With two concurrent instances
  // block k's copy runs while block k + 1 is computed; they read what was staged on `space`
  // above, and nothing orders another instance after it but a fence.
  const bool overlap = overlaps();
  if (overlap) space.fence();
  const auto rows = static_cast<std::int64_t>(plan_.rows_per_block);
  for (std::size_t b = 0; b < plan_.blocks; ++b) {
    const std::int64_t row0 = static_cast<std::int64_t>(b) * rows;  // of this kernel's rows
    const std::int64_t count = std::min(rows, own - row0);
    const Space& instance = overlap ? (*instances_)[b] : space;
    const MatrixView& buffer = buffers_[overlap ? b % kBlockBuffers : 0];
    compute_rows(instance, buffer, first + row0, count);
    Kokkos::deep_copy(instance, Kokkos::subview(streamed_.device, Kokkos::make_pair(row0, row0 + count), Kokkos::ALL()),
                      Kokkos::subview(buffer, Kokkos::make_pair(std::int64_t(0), count), Kokkos::ALL()));
  }
  // The harness fences only `space`: the other instances join here so the output is complete.
  if (overlap) {
    (*instances_)[0].fence();
    (*instances_)[1].fence();
  }
}

template <class Scalar, class Space>
Verification Kernel<Scalar, Space>::verify(std::optional<double> tolerance) const {
  if (params_.output != Output::Matrix)
    return verify_rows<Scalar>(params_, points_.host, nearest_.host, nearest_index_.host, row_sums_.host, tolerance,
                               rows_.first);
  return verify_matrix<Scalar>(params_, variant_, points_.host, matrix_host(), tolerance, layout_note(), rows_.first);
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::compute_rows(const Space& space, const MatrixView& out, std::int64_t row0, std::int64_t count) const {
  switch (variant_) {
    case Variant::Tiled: return kernels::tiled(space, coordinates_, out, row0, count, params_.dim, params_.squared);
    case Variant::Gemm: return kernels::gemm(space, points_.device, norms_, out, row0, count, params_.squared);
    default: return kernels::direct(space, coordinates_, out, row0, count, params_.dim, params_.squared);
  }
}

}  // namespace miniapp::distance
