#pragma once
// One distance problem: N points, and the matrix (whole in the space, or in row blocks streamed
// to the host when it exceeds the budget) or the per-row reductions. The members that launch
// kernels or compute the reference are defined in problem_timpl.hpp.

#include "miniapp/core/field.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/workloads/distance/direct_flat.hpp"
#include "miniapp/workloads/distance/kernels.hpp"
#include "miniapp/workloads/distance/row_reductions.hpp"
#include "miniapp/workloads/distance/params.hpp"
#include "miniapp/workloads/distance/reference.hpp"
#include "miniapp/workloads/distance/symmetric.hpp"
#include "miniapp/workloads/distance/tiled_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::distance {

template <class Scalar, class Space>
class Kernel {
  using HostOutput = Kokkos::Device<Kokkos::DefaultHostExecutionSpace, typename compat::pinned_host_memory<Space>::type>;
  using MatrixView = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space>;

 public:
  using HostMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  // The whole problem, or with `slice` one MPI rank's rows of the outputs (every rank holds every
  // point): of the row reductions, or of the matrix (rows x N; the symmetric variant then computes
  // each of its entries directly, as it does within a streamed block).
  Kernel(const Params& p, const std::string& variant, std::size_t n, const ranks::Slice& slice = {})
      : params_(p),
        variant_(Description::variant(variant)),
        n_(n),
        rows_(slice.range(n)),
        plan_(plan_blocks(p, n, sizeof(Scalar), budget_for(p, space_name<Space>(), is_host_space<Space>()),
                          rows_.second - rows_.first)),
        points_("points", n, p.dim),
        coordinates_("points (coordinate-major)", reads_coordinates() ? n : 0, p.dim),
        distances_("distances", matrix_rows(false), matrix_rows(false) ? n : 0),
        streamed_("distances (streamed to host)", matrix_rows(true), matrix_rows(true) ? n : 0),
        nearest_("nearest distance", p.output == Output::RowMin ? own_rows() : 0),
        nearest_index_("nearest index", p.output == Output::RowMin ? own_rows() : 0),
        row_sums_("row sum", p.output == Output::RowSum ? own_rows() : 0),
        norms_("norms", p.output == Output::Matrix && variant_ == Variant::Gemm ? n : 0) {
    if (plan_.chunked) {
      instances_ = std::make_unique<compat::ConcurrentInstances<Space>>(Space());
      const std::size_t buffers = overlaps() ? kBlockBuffers : 1;
      for (std::size_t b = 0; b < buffers; ++b) buffers_[b] = MatrixView("distance block", plan_.rows_per_block, n);
    }
  }

  std::vector<Transferable*> inputs() { return {&points_}; }
  std::vector<Transferable*> outputs() {
    switch (params_.output) {
      case Output::RowMin: return {&nearest_, &nearest_index_};
      case Output::RowSum: return {&row_sums_};
      default: return {plan_.chunked ? static_cast<Transferable*>(&streamed_) : &distances_};
    }
  }

  void generate_inputs(std::uint64_t seed);
  void generate_inputs_on_device(const Space& space, std::uint64_t seed);

  void compute(const Space& space);

  WorkEstimate work() const {
    const double n = static_cast<double>(n_), s = sizeof(Scalar), d = params_.dim;
    const double entries = n * n, points = static_cast<double>(points_.bytes());
    const double root = params_.squared ? 0 : 1;
    const auto rows = static_cast<double>(own_rows());  // n unless split across ranks
    switch (params_.output) {
      case Output::RowMin:  // D subtractions, multiplications, additions and a comparison per pair
        return {rows * n * (3.0 * d + 1.0) + rows * root, points, rows * (s + sizeof(std::int64_t))};
      case Output::RowSum: return {rows * n * (3.0 * d + 1.0 + root), points, rows * s};
      default: break;
    }
    WorkEstimate w;
    const double own_entries = rows * n;  // entries unless split across ranks
    switch (split() && variant_ == Variant::Symmetric ? Variant::Direct : variant_) {
      case Variant::Symmetric:  // each pair once
        w = {0.5 * n * (n + 1) * (3.0 * d + root), points, entries * s};
        break;
      case Variant::Gemm:  // the cross term, then x2 + y2 added, clamped, rooted: C is written twice
        w = {own_entries * (2.0 * d + 3.0 + root) + n * 2.0 * d, points + own_entries * s + n * s,
             2.0 * own_entries * s};
        break;
      default: w = {own_entries * (3.0 * d + root), points, own_entries * s};
    }
    if (plan_.chunked) {  // the block copies to the host, inside compute
      w.bytes_read += own_entries * s;
      w.bytes_written += own_entries * s;
    }
    return w;
  }

  Verification verify(std::optional<double> tolerance) const;

  // The matrix (this kernel's rows of it: all n, or one rank's) as the host sees it after the
  // harness's copies (or the chunked run's own); row i of the whole matrix is row i - first.
  HostMatrix matrix_host() const {
    if (plan_.chunked) return HostMatrix(streamed_.host.data(), streamed_.host.extent(0), streamed_.host.extent(1));
    return HostMatrix(distances_.host.data(), distances_.host.extent(0), distances_.host.extent(1));
  }

  // Direct access for tests.
  Field<Scalar**, Space>& points() { return points_; }
  Field<Scalar**, Space>& distances() { return distances_; }
  Field<Scalar*, Space>& nearest() { return nearest_; }
  Field<std::int64_t*, Space>& nearest_index() { return nearest_index_; }
  Field<Scalar*, Space>& row_sums() { return row_sums_; }
  const BlockPlan& block_plan() const { return plan_; }
  // The rows [first, second) of the row outputs this kernel computes.
  std::pair<std::size_t, std::size_t> own_row_range() const { return rows_; }
  bool split() const { return own_rows() < n_; }
  bool overlaps() const { return plan_.chunked && instances_ && instances_->concurrent() && variant_ != Variant::Gemm; }

 private:
  std::size_t own_rows() const { return rows_.second - rows_.first; }

  // Every kernel but the gemm form of the matrix reads the coordinate-major copy.
  bool reads_coordinates() const { return !(params_.output == Output::Matrix && variant_ == Variant::Gemm); }

  std::size_t matrix_rows(bool streamed) const {
    return params_.output == Output::Matrix && plan_.chunked == streamed ? own_rows() : 0;
  }

  // Rows [row0, row0 + count) into out(i - row0, j). Symmetric pairs rows with columns of other
  // blocks, so within a block it computes each entry directly.
  void compute_rows(const Space& space, const MatrixView& out, std::int64_t row0, std::int64_t count) const;

  std::string layout_note() const {
    if (!plan_.chunked) return "";
    std::string note = "; chunked: " + std::to_string(plan_.blocks) + " blocks of " +
                       std::to_string(plan_.rows_per_block) + " rows copied to the host inside compute (overlap " +
                       (overlaps() ? "on" : "off") + ")";
    if (variant_ == Variant::Symmetric) note += ", blocks computed entry by entry";
    return note;
  }

  Params params_;
  Variant variant_;
  std::size_t n_;
  std::pair<std::size_t, std::size_t> rows_;  // of the row outputs: all, or this rank's
  BlockPlan plan_;
  Field<Scalar**, Space> points_;
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> coordinates_;
  Field<Scalar**, Space> distances_;      // the matrix in the space (unchunked)
  Field<Scalar**, HostOutput> streamed_;  // the matrix on the host only (chunked)
  Field<Scalar*, Space> nearest_;
  Field<std::int64_t*, Space> nearest_index_;
  Field<Scalar*, Space> row_sums_;
  Kokkos::View<Scalar*, typename Space::memory_space> norms_;
  MatrixView buffers_[kBlockBuffers];
  std::unique_ptr<compat::ConcurrentInstances<Space>> instances_;
};

}  // namespace miniapp::distance
