#pragma once
// The solver's device code: LU with partial pivoting of one system by one thread, by one team,
// and the pieces of the blocked LU of one large system. Every routine records the first
// zero (or tiny) pivot as LAPACK's info does, column + 1, and then stops, so a singular system
// never turns into inf/NaN.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/random.hpp"

#include <cstdint>

namespace miniapp::solver {

// Seed 001 draws A and b with np.random.rand; `diagonally-dominant` adds n to the diagonal
// (no pivoting needed, well conditioned); `singular` repeats row 0 as the last row (rank n - 1).
enum class MatrixKind { Random, DiagonallyDominant, Singular };

// Pure functions of (seed, system, row, column), so host and device generation agree exactly.
KOKKOS_INLINE_FUNCTION double matrix_entry(MatrixKind kind, std::uint64_t seed, std::uint64_t n, std::uint64_t s,
                                           std::uint64_t i, std::uint64_t j) {
  if (kind == MatrixKind::Singular) {
    if (n == 1) return 0.0;
    if (i == n - 1) i = 0;
  }
  double v = uniform01(seed, (s * n + i) * n + j);
  if (kind == MatrixKind::DiagonallyDominant && i == j) v += static_cast<double>(n);
  return v;
}

KOKKOS_INLINE_FUNCTION double rhs_entry(std::uint64_t seed, std::uint64_t n, std::uint64_t s, std::uint64_t i) {
  return uniform01(~seed, s * n + i);  // a stream of its own, independent of A's
}

// Solves a x = b in place (b becomes x) with partial pivoting; `a` and `b` are one system's
// n x n and n slices. Returns 0, or the column + 1 of the first pivot not above `tiny`.
template <class Matrix, class Vector, class Scalar>
KOKKOS_INLINE_FUNCTION int lu_solve_one_thread(const Matrix& a, const Vector& b, int n, Scalar tiny) {
  for (int k = 0; k < n; ++k) {
    int p = k;
    Scalar best = compat::math::fabs(a(k, k));
    for (int i = k + 1; i < n; ++i) {
      const Scalar v = compat::math::fabs(a(i, k));
      if (v > best) best = v, p = i;
    }
    if (!(best > tiny)) return k + 1;
    if (p != k) {
      // Columns left of k hold multipliers nobody reads again: b is eliminated alongside.
      for (int j = k; j < n; ++j) {
        const Scalar t = a(k, j);
        a(k, j) = a(p, j);
        a(p, j) = t;
      }
      const Scalar t = b(k);
      b(k) = b(p);
      b(p) = t;
    }
    const Scalar inverse_pivot = Scalar(1) / a(k, k);
    for (int i = k + 1; i < n; ++i) {
      const Scalar l = a(i, k) * inverse_pivot;
      for (int j = k + 1; j < n; ++j) a(i, j) -= l * a(k, j);
      b(i) -= l * b(k);
    }
  }
  for (int k = n - 1; k >= 0; --k) {
    Scalar s = b(k);
    for (int j = k + 1; j < n; ++j) s -= a(k, j) * b(j);
    b(k) = s / a(k, k);
  }
  return 0;
}

// The same for one team: `m` is the augmented n x (n + 1) matrix [A | b] in team scratch; the
// pivot search is a team MaxLoc reduction, rows are eliminated across the team. On return the
// last column of m holds x (when the result is 0).
template <class Member, class Matrix, class Scalar>
KOKKOS_INLINE_FUNCTION int lu_solve_one_team(const Member& team, const Matrix& m, int n, Scalar tiny) {
  using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
  for (int k = 0; k < n; ++k) {
    typename MaxLoc::value_type pivot;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, k, n),
        [&](const int i, typename MaxLoc::value_type& best) {
          const Scalar v = compat::math::fabs(m(i, k));
          if (v > best.val) {
            best.val = v;
            best.loc = i;
          }
        },
        MaxLoc(pivot));
    if (!(pivot.val > tiny)) return k + 1;  // the same value on every member: all leave together
    const int p = pivot.loc;
    if (p != k) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k, n + 1), [&](const int j) {
        const Scalar t = m(k, j);
        m(k, j) = m(p, j);
        m(p, j) = t;
      });
      team.team_barrier();
    }
    const Scalar inverse_pivot = Scalar(1) / m(k, k);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, k + 1, n), [&](const int i) {
      const Scalar l = m(i, k) * inverse_pivot;
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, k + 1, n + 1), [&](const int j) { m(i, j) -= l * m(k, j); });
    });
    team.team_barrier();
  }
  // Column-oriented back substitution: x_k is final once the rows below have been applied.
  for (int k = n - 1; k >= 0; --k) {
    const Scalar xk = m(k, n) / m(k, k);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, k), [&](const int i) { m(i, n) -= m(i, k) * xk; });
    team.team_barrier();
    // Nothing reads m(k, n) again before the copy-out, after the barrier below.
    Kokkos::single(Kokkos::PerTeam(team), [&]() { m(k, n) = xk; });
  }
  team.team_barrier();
  return 0;
}

}  // namespace miniapp::solver
