#pragma once
// The BLAS3 product seed 000 names as the model GPU workload, C = alpha*A*B + beta*C0:
// hand-written (naive, tiled) and through Kokkos Kernels. Split across MPI ranks by row panels:
// each rank holds its own rows of A, C0 and C and the whole of B (k x n on every rank: the limit of
// this split is B's size, and it moves no data while it runs), each generated as in the whole
// problem, so the panels together are the one-rank C bit for bit. The members that launch kernels
// or compute the reference are defined in problem_timpl.hpp.

#include "miniapp/core/field.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/workloads/matrix/gemm_tiled.hpp"
#include "miniapp/workloads/matrix/kernels.hpp"
#include "miniapp/workloads/matrix/params.hpp"
#include "miniapp/workloads/matrix/reference.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace miniapp::matrix {

template <class Scalar, class Space>
class Gemm {
 public:
  using Matrix = Field<Scalar**, Space>;

  static bool runs(const std::string& variant) { return Description::variant(variant) != Variant::Elementwise; }

  // The whole product, or with `slice` one MPI rank's panel of rows of it.
  Gemm(const Params& p, const std::string& variant, std::size_t size, const ranks::Slice& slice = {})
      : params_(p),
        variant_(Description::variant(variant)),
        whole_(gemm_shape(p, size)),
        first_row_(slice.range(whole_.m).first),
        shape_(panel(whole_, slice)),
        tiles_(resolve_tiles(p, shape_)),
        a_("A", shape_.m, shape_.k),
        b_("B", shape_.k, shape_.n),
        // beta = 0: C0 is neither allocated nor read, as in BLAS.
        c0_("C0", reads_c0() ? shape_.m : 0, reads_c0() ? shape_.n : 0),
        c_("C", shape_.m, shape_.n) {}

  std::vector<Transferable*> inputs() {
    if (reads_c0()) return {&a_, &b_, &c0_};
    return {&a_, &b_};
  }
  std::vector<Transferable*> outputs() { return {&c_}; }

  // Each matrix from its own part of the stream of the whole problem's A, B, C0 in turn.
  void generate_inputs(std::uint64_t seed);
  void generate_inputs_on_device(const Space& space, std::uint64_t seed);

  void compute(const Space& space);

  // 2MNK for the products and sums; the alpha/beta scaling (O(MN)) is not counted, as in BLAS.
  // Under MPI, M is this rank's rows (the ranks' work adds up to the whole product's).
  WorkEstimate work() const {
    const double m = shape_.m, n = shape_.n, k = shape_.k, s = sizeof(Scalar);
    return {2 * m * n * k, (m * k + k * n + (reads_c0() ? m * n : 0)) * s, m * n * s};
  }

  Verification verify(std::optional<double> tolerance) const;

  // Direct access for tests and benchmarks.
  Matrix& a() { return a_; }
  Matrix& b() { return b_; }
  Matrix& c0() { return c0_; }
  Matrix& c() { return c_; }
  const TileShape& tiles() const { return tiles_; }
  const GemmShape& shape() const { return shape_; }
  // This rank's rows of the whole product's C: [first, first + shape().m).
  std::size_t first_row() const { return first_row_; }

 private:
  bool reads_c0() const { return params_.beta != 0.0; }

  static GemmShape panel(const GemmShape& whole, const ranks::Slice& slice) {
    return {slice.part(whole.m), whole.n, whole.k};
  }
  std::size_t a_offset() const { return first_row_ * whole_.k; }
  std::size_t b_offset() const { return whole_.m * whole_.k; }
  std::size_t c0_offset() const { return b_offset() + whole_.k * whole_.n + first_row_ * whole_.n; }

  static TileShape resolve_tiles(const Params& p, const GemmShape& shape) {
    TileShape t = default_tiles<Scalar, Space>(shape.m, shape.n, static_cast<int>(Space().concurrency()));
    if (p.tile_m > 0) t.m = p.tile_m;
    if (p.tile_n > 0) t.n = p.tile_n;
    if (p.tile_k > 0) t.k = p.tile_k;
    return t;
  }

  Params params_;
  Variant variant_;
  GemmShape whole_;        // the whole product's
  std::size_t first_row_;  // this rank's first row of it
  GemmShape shape_;        // this rank's panel (the whole product with one rank)
  TileShape tiles_;
  std::optional<TiledForm> ran_;  // gemm-tiled's form in the last compute
  Matrix a_, b_, c0_, c_;
};

}  // namespace miniapp::matrix
