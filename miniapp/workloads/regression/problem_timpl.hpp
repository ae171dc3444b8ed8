#pragma once
// The definitions of the regression Kernel's members that launch kernels or compute the reference
// (problem.hpp): included only by the units CMake generates per compiled space (instances.hpp),
// which instantiate them once. Tests and benchmarks include problem.hpp and link to those
// instances instead of compiling the kernels again.

#include "miniapp/workloads/regression/problem.hpp"

namespace miniapp::regression {

template <class Scalar, class Space>
void Kernel<Scalar, Space>::generate_inputs(std::uint64_t seed) {
  seed_ = seed;
  generate_on_host(x_.host, y_.host, params_.single_variable(), params_.noise_scale(), seed, first_row_, total_rows_);
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::generate_inputs_on_device(const Space& space, std::uint64_t seed) {
  seed_ = seed;
  generate(space, x_.device, y_.device, params_.single_variable(), params_.noise_scale(), seed, first_row_,
           total_rows_);
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::compute(const Space& space) {
  if constexpr (is_host_space<Space>()) {
    if (region_threads_ > 1) {
      start(space, fit_);
      fused_steps_in_one_region(space, x_.device, y_.device, step_update(), region_scratch_, region_threads_,
                                params_.iterations);
      space.fence();
      throw_if_interrupted();
      return;
    }
  }
  compute_with_launches(space);
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::compute_with_launches(const Space& space, const bool one_launch_steps) {
  const auto u = step_update();
  start(space, fit_);
  for (std::int64_t k = 0; k < params_.iterations; ++k) {
    if (!exchanges_during_compute()) interruption_point(space, k);
    if (variant_ == Variant::Fused && !exchanges_during_compute()) {
      fused_step(space, x_.device, y_.device, u, k, one_launch_steps);
      continue;
    }
    if (variant_ == Variant::Fused) fused_sums(space, x_.device, y_.device, fit_);
    else blas_sums(space, x_.device, y_.device, residual_, fit_, total_rows_);
    if (exchanges_during_compute()) add_over_ranks(space);
    update(space, u, k);
  }
}

template <class Scalar, class Space>
Verification Kernel<Scalar, Space>::verify(std::optional<double> tolerance) const {
  // Every rank checks the whole fit: the sums over the data that the reference needs are added
  // over the ranks' rows.
  const bool split = slice_.count > 1;
  return verify_fit<Scalar>(params_, seed_, x_.host, y_.host, beta_.host, loss_.host, diverged_at_.host(0), tolerance,
                            total_rows_, [split](std::vector<double>& v) {
                              if (split) ranks::sum_in_place(v);
                            });
}

template <class Scalar, class Space>
void Kernel<Scalar, Space>::add_over_ranks(const Space& space) {
  Kokkos::Timer timer;
  const std::size_t values = fit_.sums.extent(0);
  if (sums_host_.extent(0) != values) sums_host_ = Kokkos::create_mirror_view(fit_.sums);
  const auto host = sums_host_;
  Kokkos::deep_copy(space, host, fit_.sums);
  space.fence();
  exchange_.assign(host.data(), host.data() + values);
  exchange_.push_back(interrupt_requested() ? Scalar(1) : Scalar(0));
  ranks::sum_in_place(exchange_.data(), exchange_.size());
  if (exchange_.back() > Scalar(0)) {
    exchange_seconds_ += timer.seconds();
    throw Interrupted(std::max(pending_signal(), 1));
  }
  std::copy(exchange_.begin(), exchange_.begin() + static_cast<std::ptrdiff_t>(values), host.data());
  Kokkos::deep_copy(fit_.sums, host);
  exchange_seconds_ += timer.seconds();
}

}  // namespace miniapp::regression
