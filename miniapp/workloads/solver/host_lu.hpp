#pragma once
// The batched solver's host path: LU with partial pivoting of one small system on raw rows, for
// the variants that give a system to one host thread (batched-thread, and batched-team where a
// team is one thread). kernels.hpp calls them behind MINIAPP_HOST_SIMD.

#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/workloads/solver/params.hpp"

#if MINIAPP_HOST_SIMD
namespace miniapp::solver {

static_assert(simd::kPackBytes == 32, "system_columns (params.hpp) pads host rows to whole 32-byte packs");

// The end of the columns of [A | b] the host elimination runs over: system_columns on the host.
template <class Scalar>
int packed_row_end(const int n) {
  return static_cast<int>(system_columns<Scalar, Kokkos::DefaultHostExecutionSpace>(static_cast<std::size_t>(n)));
}

// The batched LU for one host thread on the rows of [A | b] (row stride ld, b in column n, the
// columns past it up to a whole pack zero; b becomes x): the elimination and back substitution
// of lu_solve_one_team in the same order. Through the team routine's nested ranges, MaxLoc
// reduction and barriers each step of a 32 x 32 system cost more than its arithmetic; here
// each row update is a run of whole packs. In rows k and below, the columns left of k are no
// longer read (the elimination carries b along, so L is not kept), so step k starts its packs at
// the one holding column k and runs to the row's end, b and padding included: the same number
// of packs for every row of a step, no remainder loop, and b's update is one of the packs.
// Returns 0 or the column + 1 of the first pivot not above `tiny`.
template <class Scalar>
inline int lu_solve_rows(Scalar* const m, const int ld, const int n, const Scalar tiny) {
  using P = simd::Pack<Scalar>;
  constexpr int W = P::width;
  const int end = packed_row_end<Scalar>(n);  // columns [0, end): A, b and the padding
  // Column k's pivot search rides on step k - 1's row updates (each row's new entry in column k
  // is compared as the row is finished), so its chain of compares hides behind the updates; the
  // rows are visited in the same order with the same test, so the same pivot is chosen.
  int p = 0;
  Scalar best = n > 0 ? compat::math::fabs(m[0]) : Scalar(0);
  for (int i = 1; i < n; ++i) {
    const Scalar v = compat::math::fabs(m[i * ld]);
    if (v > best) best = v, p = i;
  }
  for (int k = 0; k < n; ++k) {
    if (!(best > tiny)) return k + 1;
    Scalar* const pivot_row = m + k * ld;
    const int first = k / W * W;
    if (p != k) {
      Scalar* const other = m + p * ld;
      for (int j = first; j < end; j += W) {
        const typename P::type t = P::load(pivot_row + j);
        P::store(pivot_row + j, P::load(other + j));
        P::store(other + j, t);
      }
    }
    const Scalar inverse_pivot = Scalar(1) / pivot_row[k];
    int next_p = k + 1;
    Scalar next_best = 0;
    for (int i = k + 1; i < n; ++i) {
      Scalar* __restrict__ const row = m + i * ld;
      const Scalar* __restrict__ const source = pivot_row;
      const typename P::type l = typename P::type{} + row[k] * inverse_pivot;
      for (int j = first; j < end; j += W) P::store(row + j, P::load(row + j) - l * P::load(source + j));
      if (k + 1 < n) {
        const Scalar v = compat::math::fabs(row[k + 1]);
        if (i == k + 1 || v > next_best) next_best = v, next_p = i;
      }
    }
    p = next_p, best = next_best;
  }
  for (int k = n - 1; k >= 0; --k) {
    const Scalar xk = m[k * ld + n] / m[k * ld + k];
    for (int i = 0; i < k; ++i) m[i * ld + n] -= m[i * ld + k] * xk;
    m[k * ld + n] = xk;
  }
  return 0;
}

// A of system s into raw rows (row stride ld); returns max|A|, taken in packs of lanes, each lane
// its own running maximum (v > m ? v : m, which passes over NaN as the scalar form does): one
// scalar maximum is a chain of n^2 dependent max instructions, which took longer than the
// elimination.
template <class A, class Scalar>
inline Scalar copy_rows_with_max(const A& a, const int s, Scalar* const rows, const int ld, const int n) {
  using P = simd::Pack<Scalar>;
  using V = typename P::type;
  V lanes{};
  Scalar scale = 0;
  for (int i = 0; i < n; ++i) {
    Scalar* const row = rows + i * ld;
    const Scalar* const source = &a(s, i, 0);
    int j = 0;
    for (; j + P::width <= n; j += P::width) {
      const V v = P::load(source + j);
      P::store(row + j, v);
      const V magnitude = v < Scalar(0) ? -v : v;
      lanes = magnitude > lanes ? magnitude : lanes;
    }
    for (; j < n; ++j) {
      row[j] = source[j];
      const Scalar v = compat::math::fabs(source[j]);
      scale = v > scale ? v : scale;
    }
  }
  for (int l = 0; l < P::width; ++l) scale = lanes[l] > scale ? lanes[l] : scale;
  return scale;
}

// System s of the batch solved by one host thread on the rows of [A | b] (row stride ld, a
// multiple of the pack at least n + 1, as system_columns gives): A copied in with max|A|, b into
// column n and zeros past it, lu_solve_rows, then x(s, .) and info(s). Compiled as a function of
// its own, called once per system: inlined into batched-thread's loop over a run of systems, its
// loops kept values on the stack that batched-team's kept in registers.
template <class A, class B, class X, class Info, class Scalar>
[[gnu::noinline]] void solve_on_rows(const A& a, const B& b, const X& x, const Info& info, const int s,
                                     Scalar* const rows, const int ld, const int n, const Scalar tiny_factor) {
  const Scalar scale = copy_rows_with_max(a, s, rows, ld, n);
  const int end = packed_row_end<Scalar>(n);
  for (int i = 0; i < n; ++i) {
    rows[i * ld + n] = b(s, i);
    for (int j = n + 1; j < end; ++j) rows[i * ld + j] = Scalar(0);
  }
  const int result = lu_solve_rows(rows, ld, n, tiny_factor * scale);
  for (int i = 0; i < n; ++i) x(s, i) = result == 0 ? rows[i * ld + n] : Scalar(0);
  info(s) = result;
}

}  // namespace miniapp::solver
#endif
