#pragma once
// The definitions of Elementwise's and Gemm's members that launch kernels or compute the
// references (elementwise.hpp, gemm.hpp): included only by the units CMake generates per compiled
// space (instances.hpp), which instantiate them once. Tests and benchmarks include the class
// headers and link to those instances instead of compiling the kernels again.

#include "miniapp/workloads/matrix/elementwise.hpp"
#include "miniapp/workloads/matrix/gemm.hpp"

namespace miniapp::matrix {

template <class Scalar, class Space>
void Elementwise<Scalar, Space>::generate_inputs(std::uint64_t seed) {
  fill_host<false>(x_.host, seed, first_);
  fill_host<false>(y_.host, seed, total_ + first_);
}

template <class Scalar, class Space>
void Elementwise<Scalar, Space>::generate_inputs_on_device(const Space& space, std::uint64_t seed) {
  fill_device<false>(space, x_.device, seed, first_);
  fill_device<false>(space, y_.device, seed, total_ + first_);
}

template <class Scalar, class Space>
void Elementwise<Scalar, Space>::compute(const Space& space) {
  elementwise(space, op_, x_.device, y_.device, z_.device);
}

template <class Scalar, class Space>
Verification Elementwise<Scalar, Space>::verify(std::optional<double> tolerance) const {
  return verify_elementwise<Scalar>(op_, x_.host, y_.host, z_.host, tolerance);
}

template <class Scalar, class Space>
void Gemm<Scalar, Space>::generate_inputs(std::uint64_t seed) {
  fill_host<true>(a_.host, seed, a_offset());
  fill_host<true>(b_.host, seed, b_offset());
  fill_host<true>(c0_.host, seed, c0_offset());
}

template <class Scalar, class Space>
void Gemm<Scalar, Space>::generate_inputs_on_device(const Space& space, std::uint64_t seed) {
  fill_device<true>(space, a_.device, seed, a_offset());
  fill_device<true>(space, b_.device, seed, b_offset());
  fill_device<true>(space, c0_.device, seed, c0_offset());
}

template <class Scalar, class Space>
void Gemm<Scalar, Space>::compute(const Space& space) {
  const auto alpha = static_cast<Scalar>(params_.alpha), beta = static_cast<Scalar>(params_.beta);
  switch (variant_) {
    case Variant::GemmTiled:
      ran_ = gemm_tiled(space, tiles_, alpha, a_.device, b_.device, beta, c0_.device, c_.device);
      return;
    case Variant::GemmKokkosKernels:
      return gemm_kokkos_kernels(space, alpha, a_.device, b_.device, beta, c0_.device, c_.device);
    default: return gemm_naive(space, alpha, a_.device, b_.device, beta, c0_.device, c_.device);
  }
}

template <class Scalar, class Space>
Verification Gemm<Scalar, Space>::verify(std::optional<double> tolerance) const {
  Verification v = verify_gemm<Scalar>(params_, shape_, a_.host, b_.host, c0_.host, c_.host, tolerance, first_row_);
  // What ran, where the space chose it (the deck's tiles may say "space default").
  if (variant_ == Variant::GemmTiled && ran_)
    v.detail += std::string(v.detail.empty() ? "" : "; ") + "gemm-tiled ran its " + form_name(*ran_) + " form, tiles " +
                to_string(tiles_);
  return v;
}

}  // namespace miniapp::matrix
