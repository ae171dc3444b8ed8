#pragma once
// The fused gradient sums vectorised by hand for CPUs (core/host_simd.hpp; GCC >= 12 or Clang,
// host spaces of builds without a device backend).

#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/kokkos_compat.hpp"

#include <cstdint>
#include <utility>

namespace miniapp::regression {

#if MINIAPP_HOST_SIMD
// The widest row, in packs, that PackedGradient holds in registers (below).
inline constexpr int kPackedResidentPacks = 16;

// The widest row, in packs, whose beta and values PackedGradient also holds in registers (below):
// half the ISA's vector registers. Wider rows up to kPackedResidentPacks keep only the sums in
// registers and take two rows a step (lean_rows): on AVX2 (16 registers) float64's 13 packs held
// were slower than two rows a step, float32's 7 faster, and on AVX-512 (32) both were faster
// held (`regression-sums-packed` against `-lean`; docs/tuning-notes.md, "Host, PackedGradient
// for rows wider than half the registers").
inline constexpr int kPackedHeldPacks = simd::kHostVectorRegisters / 2;

// The same sums as FusedGradient, vectorised by hand for CPUs, where FusedGradient stays
// compute-bound: its loops alone, with X in cache, take longer than one streaming read of X from
// memory (docs/tuning-notes.md). Rows are cut into packs of the SIMD width; the last pack of a row ends at the row's end, and the columns it repeats are
// masked out of beta (dot products) or left out of the sums (gradient). Needs columns >= the
// pack's width; narrower models take FusedGradient. Each call takes kRowsPerCall rows, in one of
// two ways:
// - Models of up to kMaxResidentPacks packs (P <= 127 float32, P <= 63 float64): a row at a time,
//   its packs held in registers from its dot product to its update, so X is loaded once, and the
//   gradient sums in registers for the whole call. The pack count is a template parameter, which
//   is what lets the compiler keep both arrays in registers. Past HeldPacks packs (where beta, a
//   row and the sums no longer fit the ISA's registers) only the sums stay there and the loop
//   takes two rows a step (lean_rows).
// - Wider models: blocks of one pack's width of rows (8 float32 or 4 float64), whose dot products
//   come out of their accumulators in one transpose_sum, one lane per row; each row is loaded
//   twice, once for the dot product and once, from L1, for the update. Rows that wide would
//   spill from registers, which costs more than the second load (docs/tuning-notes.md).
template <class Scalar, class MemorySpace, int MaxResidentPacks = kPackedResidentPacks,
          int HeldPacks = kPackedHeldPacks>
struct PackedGradient {
  using Pack = simd::Pack<Scalar>;
  using pack = typename Pack::type;
  static constexpr int kWidth = Pack::width;
  static constexpr int kMaxResidentPacks = MaxResidentPacks;
  static constexpr std::int64_t kRowsPerCall = 64;
  // How far ahead of its row the resident loop asks for X: 8 rows of P = 50 (1.6 KiB in float32)
  // left an AMD EPYC (Zen 5), which reads X at twice an Ice Lake's rate, waiting on memory.
  static constexpr std::int64_t kAheadBytes = 4096;
  using value_type = Scalar[];
  Kokkos::View<const Scalar**, Kokkos::LayoutRight, MemorySpace> x;
  Kokkos::View<const Scalar*, Kokkos::LayoutRight, MemorySpace> y, beta;
  unsigned value_count;  // columns + 1

  static std::int64_t calls(std::size_t n) {
    return static_cast<std::int64_t>((n + kRowsPerCall - 1) / kRowsPerCall);
  }

  void operator()(const std::int64_t call, value_type sums) const {
    const auto n = static_cast<std::int64_t>(x.extent(0));
    const std::int64_t first = call * kRowsPerCall, last = first + kRowsPerCall < n ? first + kRowsPerCall : n;
    const int packs = static_cast<int>((value_count - 1 + kWidth - 1) / kWidth);
    if constexpr (kMaxResidentPacks > 0) {
      if (packs <= kMaxResidentPacks) {
        resident(std::make_integer_sequence<int, kMaxResidentPacks>(), packs, first, last, sums);
        return;
      }
    }
    blocks(first, last, sums);
  }

  // beta's last pack, columns [cols - width, cols), with its first width - fresh lanes (columns
  // that the pack before it holds too) zero.
  pack tail_beta(const std::int64_t cols, const int fresh) const {
    return Pack::load(beta.data() + cols - kWidth) * Pack::last_lanes(fresh);
  }

  // Rows from a row to the one the resident loops ask for: kAheadBytes of X.
  static std::int64_t rows_ahead(const std::int64_t cols) {
    const std::int64_t row_bytes = cols * static_cast<std::int64_t>(sizeof(Scalar));
    return (kAheadBytes + row_bytes - 1) / row_bytes;
  }

  // Asks for Lines cache lines of X from `from` on.
  template <int Lines>
  static void prefetch(const Scalar* from) {
    const char* const ahead = reinterpret_cast<const char*>(from);
    for (int line = 0; line < Lines; ++line) __builtin_prefetch(ahead + 64 * line);
  }

  // The resident loops' K packs of sums (the last one's first width - fresh lanes repeating the
  // pack before it) and sum of squares, added into sums.
  template <int K>
  static void add_resident_sums(const pack (&g)[K], const std::int64_t cols, const int fresh, const Scalar squares,
                                value_type sums) {
    for (int k = 0; k + 1 < K; ++k) Pack::store(sums + k * kWidth, Pack::load(sums + k * kWidth) + g[k]);
    for (int l = kWidth - fresh; l < kWidth; ++l) sums[cols - kWidth + l] += g[K - 1][l];
    sums[cols] += squares;
  }

  // resident_rows<packs>, packs in [1, sizeof...(K)].
  template <int... K>
  void resident(std::integer_sequence<int, K...>, const int packs, const std::int64_t first, const std::int64_t last,
                value_type sums) const {
    (void)((packs == K + 1 && (resident_rows<K + 1>(first, last, sums), true)) || ...);
  }

  template <int K>
  void resident_rows(const std::int64_t first, const std::int64_t last, value_type sums) const {
    if constexpr (K > HeldPacks) {
      lean_rows<K>(first, last, sums);
      return;
    }
    const std::int64_t cols = value_count - 1;
    const int fresh = static_cast<int>(cols - (K - 1) * kWidth);  // lanes of the last pack not in the one before
    pack b[K];
    for (int k = 0; k + 1 < K; ++k) b[k] = Pack::load(beta.data() + k * kWidth);
    b[K - 1] = tail_beta(cols, fresh);
    pack g[K] = {};
    Scalar squares = 0;
    const auto n = static_cast<std::int64_t>(x.extent(0));
    const std::int64_t ahead_rows = rows_ahead(cols);
    constexpr int kLines = (K * kWidth * static_cast<int>(sizeof(Scalar)) + 63) / 64;  // lines a row touches, at most
    for (std::int64_t i = first; i < last; ++i) {
      const Scalar* xi = &x(i, 0);
      // The row kAheadBytes ahead, asked for now: each row's chain (dot product, sum, update)
      // leaves few of its loads in flight, and without this the loop took 1.25-1.4x one
      // streaming read of X; with it 1.02-1.07x (docs/tuning-notes.md).
      if (i + ahead_rows < n) prefetch<kLines>(&x(i + ahead_rows, 0));
      pack xk[K];
      for (int k = 0; k + 1 < K; ++k) xk[k] = Pack::load(xi + k * kWidth);
      xk[K - 1] = Pack::load(xi + cols - kWidth);
      // Two chains of multiply-adds, so the dot product's latency is half the pack count's.
      pack even = xk[0] * b[0], odd{};
      for (int k = 1; k < K; k += 2) {
        odd += xk[k] * b[k];
        if (k + 1 < K) even += xk[k + 1] * b[k + 1];
      }
      const Scalar r = Pack::sum(even + odd) - y(i);
      squares += r * r;
      for (int k = 0; k < K; ++k) g[k] += xk[k] * r;
    }
    add_resident_sums(g, cols, fresh, squares, sums);
  }

  // resident_rows with only the sums in registers, two rows at a time: beta read from L1 once
  // for both rows' dot products, and the rows read again, from L1, for the update.
  template <int K>
  void lean_rows(const std::int64_t first, const std::int64_t last, value_type sums) const {
    const std::int64_t cols = value_count - 1;
    const int fresh = static_cast<int>(cols - (K - 1) * kWidth);
    const Scalar* const b = beta.data();
    const pack last_beta = tail_beta(cols, fresh);
    pack g[K] = {};
    Scalar squares = 0;
    const auto n = static_cast<std::int64_t>(x.extent(0));
    const std::int64_t ahead_rows = rows_ahead(cols);
    constexpr int kLines = (2 * K * kWidth * static_cast<int>(sizeof(Scalar)) + 63) / 64;  // two rows
    const auto offset = [&](const int k) { return k + 1 < K ? k * kWidth : cols - kWidth; };
    std::int64_t i = first;
    for (; i + 1 < last; i += 2) {
      const Scalar* x0 = &x(i, 0);
      const Scalar* x1 = x0 + cols;
      if (i + ahead_rows + 1 < n) prefetch<kLines>(&x(i + ahead_rows, 0));
      pack d0{}, d1{};
      for (int k = 0; k < K; ++k) {
        const pack bk = k + 1 < K ? Pack::load(b + k * kWidth) : last_beta;
        d0 += Pack::load(x0 + offset(k)) * bk;
        d1 += Pack::load(x1 + offset(k)) * bk;
      }
      const Scalar r0 = Pack::sum(d0) - y(i), r1 = Pack::sum(d1) - y(i + 1);
      squares += r0 * r0 + r1 * r1;
      for (int k = 0; k < K; ++k) g[k] += Pack::load(x0 + offset(k)) * r0 + Pack::load(x1 + offset(k)) * r1;
    }
    for (; i < last; ++i) {
      const Scalar* x0 = &x(i, 0);
      pack d0{};
      for (int k = 0; k < K; ++k) d0 += Pack::load(x0 + offset(k)) * (k + 1 < K ? Pack::load(b + k * kWidth) : last_beta);
      const Scalar r0 = Pack::sum(d0) - y(i);
      squares += r0 * r0;
      for (int k = 0; k < K; ++k) g[k] += Pack::load(x0 + offset(k)) * r0;
    }
    add_resident_sums(g, cols, fresh, squares, sums);
  }

  // r_l = x_(i+l) . beta - y_(i+l) for the block at row i, one lane per row.
  pack residuals(const std::int64_t i, const std::int64_t cols, const pack& last_beta) const {
    const Scalar* b = beta.data();
    const Scalar* xr[kWidth];
    for (int l = 0; l < kWidth; ++l) xr[l] = &x(i + l, 0);
    pack dots[kWidth] = {};
    std::int64_t j = 0;
    for (; j + kWidth <= cols; j += kWidth) {
      const pack bj = Pack::load(b + j);
      for (int l = 0; l < kWidth; ++l) dots[l] += Pack::load(xr[l] + j) * bj;
    }
    for (int l = 0; l < kWidth; ++l) dots[l] += Pack::load(xr[l] + cols - kWidth) * last_beta;
    return Pack::transpose_sum(dots) - Pack::load(&y(i));
  }

  // sums[j] += sum_l x_(i+l),j r_l: the whole packs of columns into sums, the last pack into
  // tail_sums.
  void accumulate(const std::int64_t i, const pack& r, const std::int64_t cols, Scalar* sums, pack& tail_sums) const {
    const Scalar* xr[kWidth];
    for (int l = 0; l < kWidth; ++l) xr[l] = &x(i + l, 0);
    for (std::int64_t j = 0; j + kWidth <= cols; j += kWidth) {
      // Two chains of multiply-adds: one chain through all rows would make its latency the
      // loop's.
      pack even = Pack::load(xr[0] + j) * r[0], odd = Pack::load(xr[1] + j) * r[1];
      for (int l = 2; l < kWidth; l += 2) {
        even += Pack::load(xr[l] + j) * r[l];
        odd += Pack::load(xr[l + 1] + j) * r[l + 1];
      }
      Pack::store(sums + j, Pack::load(sums + j) + (even + odd));
    }
    for (int l = 0; l < kWidth; ++l) tail_sums += Pack::load(xr[l] + cols - kWidth) * r[l];
  }

  // Where the width divides the columns, the loops over whole packs take them all and the last
  // pack repeats them all: its beta is zero.
  void blocks(const std::int64_t first, const std::int64_t last, value_type sums) const {
    const std::int64_t cols = value_count - 1, tail = cols - kWidth;
    const int repeated = kWidth - static_cast<int>(cols % kWidth);  // leading lanes of the last pack
    const Scalar* b = beta.data();
    const pack last_beta = tail_beta(cols, kWidth - repeated);
    pack tail_sums{}, squares{};
    std::int64_t i = first;
    for (; i + kWidth <= last; i += kWidth) {
      const pack r = residuals(i, cols, last_beta);
      squares += r * r;
      accumulate(i, r, cols, sums, tail_sums);
    }
    for (; i < last; ++i) {  // the rows after the last whole block
      const Scalar* xi = &x(i, 0);
      pack dot{};
      std::int64_t j = 0;
      for (; j + kWidth <= cols; j += kWidth) dot += Pack::load(xi + j) * Pack::load(b + j);
      dot += Pack::load(xi + tail) * last_beta;
      const Scalar r = Pack::sum(dot) - y(i);
      squares[0] += r * r;
      for (j = 0; j + kWidth <= cols; j += kWidth) Pack::store(sums + j, Pack::load(sums + j) + Pack::load(xi + j) * r);
      tail_sums += Pack::load(xi + tail) * r;
    }
    for (int l = repeated; l < kWidth; ++l) sums[tail + l] += tail_sums[l];
    sums[cols] += Pack::sum(squares);
  }
};
#endif

}  // namespace miniapp::regression
