#pragma once
// The solver's problems. Every variant solves the same systems (Systems: A, b, x, info, their
// generation, work and verification); the batched variants solve them all at once (batched-thread
// on work Views of one slice per system on devices, two per thread on host spaces), dense-blocked
// and dense-vendor one after another on one system's work space. The members that launch kernels
// or compute the reference are defined in problem_timpl.hpp.

#include "miniapp/core/field.hpp"
#include "miniapp/core/interruption.hpp"
#include "miniapp/core/kernel_choice.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/workloads/solver/blocked_lu.hpp"
#include "miniapp/workloads/solver/kernels.hpp"
#include "miniapp/workloads/solver/params.hpp"
#include "miniapp/workloads/solver/reference.hpp"
#include "miniapp/workloads/solver/vendor.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace miniapp::solver {

// The systems this kernel solves: the whole batch, or with a slice one MPI rank's part of it.
template <class Scalar, class Space>
class Systems {
 public:
  Systems(const Params& p, std::size_t n, const ranks::Slice& slice = {})
      : matrix_(p.matrix),
        first_(slice.range(p.systems).first),
        a_("A", slice.part(p.systems), n, n),
        b_("b", slice.part(p.systems), n),
        x_("x", slice.part(p.systems), n),
        info_("info", slice.part(p.systems)) {}

  // The systems [first, second) of the batch held here.
  std::pair<std::size_t, std::size_t> own_systems() const { return {first_, first_ + a_.device.extent(0)}; }

  std::vector<Transferable*> inputs() { return {&a_, &b_}; }
  std::vector<Transferable*> outputs() { return {&x_, &info_}; }

  void generate_inputs(std::uint64_t seed);
  void generate_inputs_on_device(const Space& space, std::uint64_t seed);

  WorkEstimate work() const {
    const double n = static_cast<double>(a_.device.extent(1)), systems = static_cast<double>(a_.device.extent(0));
    return {systems * (2.0 / 3.0 * n * n * n + 2.0 * n * n), static_cast<double>(a_.bytes() + b_.bytes()),
            static_cast<double>(x_.bytes())};
  }

  Verification verify(std::optional<double> tolerance) const;

  // Direct access for tests.
  Field<Scalar***, Space>& matrices() { return a_; }
  Field<Scalar**, Space>& rhs() { return b_; }
  Field<Scalar**, Space>& solutions() { return x_; }
  Field<int*, Space>& info() { return info_; }

 protected:
  MatrixKind matrix_;
  std::size_t first_;  // the first system held, in the whole batch
  Field<Scalar***, Space> a_;
  Field<Scalar**, Space> b_;
  Field<Scalar**, Space> x_;
  Field<int*, Space> info_;  // per system: 0, or the column + 1 of the first zero pivot (LAPACK's info)
};

template <class Scalar, class Space>
class Batched : public Systems<Scalar, Space> {
 public:
  // One system per thread: on GPUs the system index runs fastest, so neighbouring threads touch
  // neighbouring addresses; on CPUs each thread's system is contiguous.
  using BatchLayout = std::conditional_t<is_host_space<Space>(), Kokkos::LayoutRight, Kokkos::LayoutLeft>;
  using Device = Kokkos::Device<Space, typename Space::memory_space>;

  static bool runs(const std::string& variant) {
    const Variant v = Description::variant(variant);
    return v != Variant::DenseBlocked && v != Variant::DenseVendor;
  }

  // The batch, or one MPI rank's systems of it: every system is solved on its own.
  Batched(const Params& p, const std::string& variant, std::size_t n, const ranks::Slice& slice = {})
      : Systems<Scalar, Space>(p, n, slice), variant_(Description::variant(variant)) {
    const std::size_t systems = this->a_.device.extent(0);
    const bool thread = variant_ == Variant::BatchedThread, kokkos_kernels = variant_ == Variant::BatchedKokkosKernels;
    if (kokkos_kernels && !compat::kHasBatchedPivotingSolve)
      throw std::invalid_argument(std::string("solver: batched-kokkos-kernels ") + compat::kBatchedPivotingSolveRequirement);
    if (variant_ == Variant::BatchedTeam)
      if (const auto why = team_scratch_refusal<Scalar, Space>(n)) throw std::invalid_argument(*why);
    if (thread)
      if (const auto why = thread_scratch_refusal<Scalar, Space>(n)) throw std::invalid_argument(*why);
    const std::size_t slices = thread ? thread_work_slices(Space(), systems) : kokkos_kernels ? systems : 0;
    // batched-thread on a host space: [A | b] in each slice of lu (solve_thread_system)
    const std::size_t columns = thread && is_host_space<Space>() ? system_columns<Scalar, Space>(n) : n;
    lu_ = Kokkos::View<Scalar***, BatchLayout, Device>("solver::lu", slices, n, columns);
    rhs_ = Kokkos::View<Scalar**, BatchLayout, Device>("solver::rhs", thread ? slices : 0, n);
    pivots_ = Kokkos::View<int**, BatchLayout, Device>("solver::pivots", kokkos_kernels ? systems : 0, n);
  }

  void compute(const Space& space);

 private:
  Variant variant_;
  Kokkos::View<Scalar***, BatchLayout, Device> lu_;
  Kokkos::View<Scalar**, BatchLayout, Device> rhs_;
  Kokkos::View<int**, BatchLayout, Device> pivots_;
};

template <class Scalar, class Space>
class DenseBlocked : public Systems<Scalar, Space> {
 public:
  static bool runs(const std::string& variant) { return Description::variant(variant) == Variant::DenseBlocked; }

  DenseBlocked(const Params& p, const std::string&, std::size_t n)
      : Systems<Scalar, Space>(p, n), block_size_(p.block_size), work_(n) {
    work_.info = this->info_.device;
  }

  // One system after another on the same work space; a signal is noticed between panels.
  void compute(const Space& space);

 private:
  int block_size_;
  blocked::Work<Scalar, Space> work_;
};

template <class Scalar, class Space>
class DenseVendor : public Systems<Scalar, Space> {
 public:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;

  static bool runs(const std::string& variant) { return Description::variant(variant) == Variant::DenseVendor; }

  DenseVendor(const Params& p, const std::string&, std::size_t n)
      : Systems<Scalar, Space>(p, n),
        lu_("solver::lu", n, n),
        scale_("solver::scale"),
        first_tiny_("solver::first-tiny"),
        vendor_lu_(make_lu(lu_)) {}

  // One system after another on the same work space; a signal is noticed between systems.
  void compute(const Space& space);

 private:
  static vendor::Lu<Scalar, Space> make_lu(const Kokkos::View<Scalar**, Kokkos::LayoutLeft, Device>& lu) {
    if (!vendor::available<Space>())
      throw std::invalid_argument("solver: dense-vendor " + vendor::unavailable_reason());
    return vendor::Lu<Scalar, Space>(Space(), static_cast<int>(lu.extent(0)), lu.data());
  }

  Kokkos::View<Scalar**, Kokkos::LayoutLeft, Device> lu_;  // column-major, as LAPACK factors
  Kokkos::View<Scalar, typename Space::memory_space> scale_;
  Kokkos::View<int, typename Space::memory_space> first_tiny_;
  vendor::Lu<Scalar, Space> vendor_lu_;
};

// The variant's class; every one also gives the systems to tests.
template <class Scalar, class Space>
class Kernel : public KernelChoice<Space, Batched<Scalar, Space>, DenseBlocked<Scalar, Space>, DenseVendor<Scalar, Space>> {
  using Choice = KernelChoice<Space, Batched<Scalar, Space>, DenseBlocked<Scalar, Space>, DenseVendor<Scalar, Space>>;

 public:
  using Choice::Choice;

  Field<Scalar***, Space>& matrices() { return systems().matrices(); }
  Field<Scalar**, Space>& rhs() { return systems().rhs(); }
  Field<Scalar**, Space>& solutions() { return systems().solutions(); }
  Field<int*, Space>& info() { return systems().info(); }

 private:
  Systems<Scalar, Space>& systems() { return this->template as<Systems<Scalar, Space>>(); }
};

}  // namespace miniapp::solver
