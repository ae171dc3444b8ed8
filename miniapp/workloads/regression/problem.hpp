#pragma once
// One fit: the data X = [data, 1] and y, and from beta = 0 `iterations` gradient steps of two
// kernels each (the gradient sums, then a one-thread update that records the loss and stops
// updating once the loss grows or is not finite); on a host space of several threads, the fused
// variant's steps all in one parallel region (one_region.hpp, fused_steps_in_one_region). Nothing
// comes back to the host until the harness copies the outputs. One harness iteration is the whole
// fit, so it notices a signal between steps.
//
// Split across MPI ranks (a ranks::Slice of more than one rank), each rank holds its own rows of
// X and y and every rank the whole beta: each step's sums are added over the ranks (one
// allreduce of cols + 2 values on the host) before the update, which every rank then applies to
// the same values, so every rank's beta stays the same. A signal is carried in that allreduce, so
// all ranks stop at the same step and none is left waiting in it.
//
// The members that launch kernels or compute the reference are defined in problem_timpl.hpp.

#include "miniapp/core/field.hpp"
#include "miniapp/core/interruption.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/workloads/regression/one_region.hpp"
#include "miniapp/workloads/regression/params.hpp"
#include "miniapp/workloads/regression/reference.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::regression {

template <class Scalar, class Space>
class Kernel {
  using Vector = Field<Scalar*, Space>;
  using FitState = Fit<Scalar, Space, typename Vector::device_view, typename Vector::device_view,
                       typename Field<std::int64_t*, Space>::device_view>;

 public:
  // The whole problem of n rows, or with `slice` one MPI rank's rows of it.
  Kernel(const Params& p, const std::string& variant, std::size_t n, const ranks::Slice& slice = {})
      : params_(p),
        variant_(Description::variant(variant)),
        slice_(slice),
        total_rows_(n),
        first_row_(slice.range(n).first),
        x_("X", slice.part(n), p.columns()),
        y_("y", slice.part(n)),
        beta_("beta", p.columns()),
        loss_("loss", static_cast<std::size_t>(p.iterations)),
        diverged_at_("diverged_at", 1),
        residual_("residual", variant_ == Variant::Blas ? slice.part(n) : 0),
        fit_{beta_.device, loss_.device, diverged_at_.device, typename FitState::View("gradient_sums", p.columns() + 1),
             typename FitState::View("best_loss", 2),
             typename FitState::View("team_gradient_partials",
                                     variant_ == Variant::Fused && !is_host_space<Space>()
                                         ? fused_partials_size<Scalar, Space>(slice.part(n), p.columns())
                                         : 0),
             typename FitState::Counter("teams_done", variant_ == Variant::Fused && !is_host_space<Space>()
                                                          ? fused_partials_size<Scalar, Space>(
                                                                slice.part(n), p.columns(), Space(), true)
                                                          : 0)},
        region_threads_(variant_ == Variant::Fused && slice.count == 1 ? fused_region_threads(Space()) : 1),
        region_scratch_("region_scratch",
                        region_threads_ > 1 ? region_scratch_size<Scalar>(region_threads_, p.columns()) : 0) {}

  std::vector<Transferable*> inputs() { return {&x_, &y_}; }
  std::vector<Transferable*> outputs() { return {&beta_, &loss_, &diverged_at_}; }

  void generate_inputs(std::uint64_t seed);
  void generate_inputs_on_device(const Space& space, std::uint64_t seed);

  void compute(const Space& space);

  // The steps as launches, a reduction (or two gemv) and an update each: what compute does on
  // device spaces, on Serial, for the blas variant and across MPI ranks; public for the tests and
  // the benchmark that compare it with the steps in one region. On device spaces a fused step of
  // one rank is one launch (fused_step) unless `one_launch_steps` is false.
  void compute_with_launches(const Space& space, bool one_launch_steps = true);

  // Whether compute calls collectives (the harness then agrees with the other ranks on a signal
  // between iterations, and an error on one rank ends them all: see harness.hpp).
  bool exchanges_during_compute() const { return slice_.count > 1; }
  // Seconds compute spent adding the sums over the ranks (copies to and from the host included)
  // since the last call.
  double take_exchange_seconds() { return std::exchange(exchange_seconds_, 0.0); }
  std::pair<std::size_t, std::size_t> own_row_range() const { return {first_row_, first_row_ + x_.host.extent(0)}; }

  // Whether compute runs the steps in one parallel region (fused_steps_in_one_region), and on how
  // many threads; 1: a reduction and an update launch per step.
  int region_threads() const { return region_threads_; }

  WorkEstimate work() const {
    // This rank's rows (all rows with one); the exchange of cols + 2 values per step is not counted.
    const double n = static_cast<double>(x_.device.extent(0)), c = static_cast<double>(params_.columns());
    const double s = sizeof(Scalar), steps = static_cast<double>(params_.iterations);
    // Per step: X beta and X^T r, 2 N cols multiply-adds each.
    const double flops = 4.0 * n * c * steps;
    if (variant_ == Variant::Fused) return {flops, steps * s * (n * c + n + c), steps * s * (c + 1)};
    // r = y (copy), r = X beta - r, sum r^2, g = X^T r: X twice, r or y four times.
    return {flops, steps * s * (2 * n * c + 4 * n + c), steps * s * (2 * n + c)};
  }

  Verification verify(std::optional<double> tolerance) const;

  // Direct access for tests.
  Field<Scalar**, Space>& x() { return x_; }
  Vector& y() { return y_; }
  Vector& beta() { return beta_; }
  Vector& loss() { return loss_; }
  Field<std::int64_t*, Space>& diverged_at() { return diverged_at_; }
  void set_seed(std::uint64_t seed) { seed_ = seed; }

 private:
  // The step's sums (and the loss) over every rank's rows, in place, and whether any rank has
  // received a signal: an extra value of the same allreduce, so that every rank learns it at the
  // same step and stops there (Interrupted), none left waiting in the next step's allreduce.
  void add_over_ranks(const Space& space);

  // blas: gemv already scaled the gradient by 2/N; fused: the raw sums.
  StepUpdate<FitState, Scalar> step_update() const {
    const Scalar inv_n = Scalar(1) / static_cast<Scalar>(total_rows_);
    const Scalar scale = variant_ == Variant::Fused ? Scalar(2) * inv_n : Scalar(1);
    return {fit_, static_cast<Scalar>(params_.rate()) * scale, inv_n, static_cast<Scalar>(growth_tolerance<Scalar>())};
  }

  Params params_;
  Variant variant_;
  ranks::Slice slice_;
  std::size_t total_rows_;  // N of the whole problem
  std::size_t first_row_;   // this rank's first row in it
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
  compat::host_mirror_t<typename FitState::View> sums_host_;  // the sums on the host, for the allreduce
  std::vector<Scalar> exchange_;                   // the sums and the signal flag of one allreduce
  double exchange_seconds_ = 0;
};

}  // namespace miniapp::regression
