#pragma once
// One fit: the data X = [data, 1] and y, and from beta = 0 `iterations` gradient steps of two
// kernels each (the gradient sums, then a one-thread update that records the loss and stops
// updating once the loss grows or is not finite); on a host space of several threads, the fused
// variant's steps all in one parallel region (one_region.hpp, fused_steps_in_one_region). Nothing
// comes back to the host until the harness copies the outputs. One harness iteration is the whole
// fit, so it notices a signal between steps.

#include "miniapp/core/field.hpp"
#include "miniapp/core/interruption.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/workloads/regression/one_region.hpp"
#include "miniapp/workloads/regression/params.hpp"
#include "miniapp/workloads/regression/reference.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace miniapp::regression {

template <class Scalar, class Space>
class Kernel {
  using Vector = Field<Scalar*, Space>;
  using FitState = Fit<Scalar, Space, typename Vector::device_view, typename Vector::device_view,
                       typename Field<std::int64_t*, Space>::device_view>;

 public:
  Kernel(const Params& p, const std::string& variant, std::size_t n)
      : params_(p),
        variant_(Description::variant(variant)),
        x_("X", n, p.columns()),
        y_("y", n),
        beta_("beta", p.columns()),
        loss_("loss", static_cast<std::size_t>(p.iterations)),
        diverged_at_("diverged_at", 1),
        residual_("residual", variant_ == Variant::Blas ? n : 0),
        fit_{beta_.device, loss_.device, diverged_at_.device, typename FitState::View("gradient_sums", p.columns() + 1),
             typename FitState::View("best_loss", 2)},
        region_threads_(variant_ == Variant::Fused ? fused_region_threads(Space()) : 1),
        region_scratch_("region_scratch",
                        region_threads_ > 1 ? region_scratch_size<Scalar>(region_threads_, p.columns()) : 0) {}

  std::vector<Transferable*> inputs() { return {&x_, &y_}; }
  std::vector<Transferable*> outputs() { return {&beta_, &loss_, &diverged_at_}; }

  void generate_inputs(std::uint64_t seed) {
    seed_ = seed;
    generate_on_host(x_.host, y_.host, params_.single_variable(), params_.noise_scale(), seed);
  }
  void generate_inputs_on_device(const Space& space, std::uint64_t seed) {
    seed_ = seed;
    generate(space, x_.device, y_.device, params_.single_variable(), params_.noise_scale(), seed);
  }

  void compute(const Space& space) {
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

  // The steps as launches, a reduction (or two gemv) and an update each: what compute does on
  // device spaces, on Serial and for the blas variant; public for the tests and the benchmark that
  // compare it with the steps in one region.
  void compute_with_launches(const Space& space) {
    const auto u = step_update();
    start(space, fit_);
    for (std::int64_t k = 0; k < params_.iterations; ++k) {
      interruption_point(space, k);
      if (variant_ == Variant::Fused) fused_sums(space, x_.device, y_.device, fit_);
      else blas_sums(space, x_.device, y_.device, residual_, fit_);
      update(space, u, k);
    }
  }

  // Whether compute runs the steps in one parallel region (fused_steps_in_one_region), and on how
  // many threads; 1: a reduction and an update launch per step.
  int region_threads() const { return region_threads_; }

  WorkEstimate work() const {
    const double n = static_cast<double>(x_.device.extent(0)), c = static_cast<double>(params_.columns());
    const double s = sizeof(Scalar), steps = static_cast<double>(params_.iterations);
    // Per step: X beta and X^T r, 2 N cols multiply-adds each.
    const double flops = 4.0 * n * c * steps;
    if (variant_ == Variant::Fused) return {flops, steps * s * (n * c + n + c), steps * s * (c + 1)};
    // r = y (copy), r = X beta - r, sum r^2, g = X^T r: X twice, r or y four times.
    return {flops, steps * s * (2 * n * c + 4 * n + c), steps * s * (2 * n + c)};
  }

  Verification verify(std::optional<double> tolerance) const {
    return verify_fit<Scalar>(params_, seed_, x_.host, y_.host, beta_.host, loss_.host, diverged_at_.host(0), tolerance);
  }

  // Direct access for tests.
  Field<Scalar**, Space>& x() { return x_; }
  Vector& y() { return y_; }
  Vector& beta() { return beta_; }
  Vector& loss() { return loss_; }
  Field<std::int64_t*, Space>& diverged_at() { return diverged_at_; }
  void set_seed(std::uint64_t seed) { seed_ = seed; }

 private:
  // blas: gemv already scaled the gradient by 2/N; fused: the raw sums.
  StepUpdate<FitState, Scalar> step_update() const {
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(x_.device.extent(0));
    const Scalar scale = variant_ == Variant::Fused ? Scalar(2) * inv_n : Scalar(1);
    return {fit_, static_cast<Scalar>(params_.rate()) * scale, inv_n, static_cast<Scalar>(growth_tolerance<Scalar>())};
  }

  Params params_;
  Variant variant_;
  std::uint64_t seed_ = 0;
  Field<Scalar**, Space> x_;
  Vector y_;
  Vector beta_;
  Vector loss_;
  Field<std::int64_t*, Space> diverged_at_;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, typename Space::memory_space> residual_;
  FitState fit_;
  int region_threads_;  // > 1: compute runs the steps in one parallel region
  typename FitState::View region_scratch_;  // fused_steps_in_one_region's partial sums and betas
};

}  // namespace miniapp::regression
