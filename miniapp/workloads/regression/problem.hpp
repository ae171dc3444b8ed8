#pragma once
// One fit: the data X = [data, 1] and y, and from beta = 0 `iterations` gradient steps of two
// kernels each (the gradient sums, then a one-thread update that records the loss and stops
// updating once the loss grows or is not finite). Nothing comes back to the host until the
// harness copies the outputs. One harness iteration is the whole fit, so it notices a signal
// between steps.

#include "miniapp/core/field.hpp"
#include "miniapp/core/interruption.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/workloads/regression/kernels.hpp"
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
             typename FitState::View("best_loss", 2)} {}

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
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(x_.device.extent(0));
    // blas: gemv already scaled the gradient by 2/N; fused: the raw sums.
    const bool fused = variant_ == Variant::Fused;
    const Scalar step = static_cast<Scalar>(params_.rate()) * (fused ? Scalar(2) * inv_n : Scalar(1));
    const auto growth = static_cast<Scalar>(growth_tolerance<Scalar>());
    start(space, fit_);
    for (std::int64_t k = 0; k < params_.iterations; ++k) {
      interruption_point(space, k);
      if (fused) fused_sums(space, x_.device, y_.device, fit_);
      else blas_sums(space, x_.device, y_.device, residual_, fit_);
      update(space, fit_, k, step, inv_n, growth);
    }
  }

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
};

}  // namespace miniapp::regression
