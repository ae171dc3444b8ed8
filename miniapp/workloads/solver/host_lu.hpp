#pragma once
// The batched solver's host path: LU with partial pivoting of one small system on raw rows, for
// the variants that give a system to one host thread (batched-thread, and batched-team where a
// team is one thread). kernels.hpp calls them behind MINIAPP_HOST_SIMD.

#include "miniapp/core/host_simd.hpp"
#include "miniapp/core/kokkos_compat.hpp"

namespace miniapp::solver {

// The batched LU for one host thread on raw rows of A (row stride ld) and its right-hand side
// (rhs[i * rhs_stride]; b becomes x): the elimination and back substitution of lu_solve_one_team
// in the same order, as plain loops. Through the team routine's nested ranges, MaxLoc reduction
// and barriers each step of a 32 x 32 system cost more than its arithmetic; here each row update
// is one contiguous loop the compiler vectorizes. Returns 0 or the column + 1 of the first pivot
// not above `tiny`.
template <class Scalar>
inline int lu_solve_rows(Scalar* const m, const int ld, const int n, Scalar* const rhs, const int rhs_stride,
                         const Scalar tiny) {
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
    if (p != k) {
      Scalar* const other = m + p * ld;
      for (int j = k; j < n; ++j) {
        const Scalar t = pivot_row[j];
        pivot_row[j] = other[j];
        other[j] = t;
      }
      const Scalar t = rhs[k * rhs_stride];
      rhs[k * rhs_stride] = rhs[p * rhs_stride];
      rhs[p * rhs_stride] = t;
    }
    const Scalar inverse_pivot = Scalar(1) / pivot_row[k];
    const Scalar bk = rhs[k * rhs_stride];
    int next_p = k + 1;
    Scalar next_best = 0;
    for (int i = k + 1; i < n; ++i) {
      Scalar* __restrict__ const row = m + i * ld;
      const Scalar* __restrict__ const source = pivot_row;
      const Scalar l = row[k] * inverse_pivot;
      for (int j = k + 1; j < n; ++j) row[j] -= l * source[j];
      rhs[i * rhs_stride] -= l * bk;
      if (k + 1 < n) {
        const Scalar v = compat::math::fabs(row[k + 1]);
        if (i == k + 1 || v > next_best) next_best = v, next_p = i;
      }
    }
    p = next_p, best = next_best;
  }
  for (int k = n - 1; k >= 0; --k) {
    const Scalar xk = rhs[k * rhs_stride] / m[k * ld + k];
    for (int i = 0; i < k; ++i) rhs[i * rhs_stride] -= m[i * ld + k] * xk;
    rhs[k * rhs_stride] = xk;
  }
  return 0;
}

#if MINIAPP_HOST_SIMD
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

// System s of the batch solved by one host thread on raw rows: A into `rows` (row stride ld) with
// max|A|, b into rhs (rhs[i * rhs_stride]), lu_solve_rows, then x(s, .) and info(s).
template <class A, class B, class X, class Info, class Scalar>
inline void solve_on_rows(const A& a, const B& b, const X& x, const Info& info, const int s, Scalar* const rows,
                          const int ld, Scalar* const rhs, const int rhs_stride, const int n, const Scalar tiny_factor) {
  const Scalar scale = copy_rows_with_max(a, s, rows, ld, n);
  for (int i = 0; i < n; ++i) rhs[i * rhs_stride] = b(s, i);
  const int result = lu_solve_rows(rows, ld, n, rhs, rhs_stride, tiny_factor * scale);
  for (int i = 0; i < n; ++i) x(s, i) = result == 0 ? rhs[i * rhs_stride] : Scalar(0);
  info(s) = result;
}
#endif

}  // namespace miniapp::solver
