#pragma once
// dense-blocked's third form of a panel leaf, resident (devices): one launch a leaf, its rows in
// the team scratch of teams that all run at once, a barrier in global memory a column; and the
// choice among the three forms (factor_leaf). blocked_leaf.hpp has the other two.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/solver/blocked_leaf.hpp"
#include "miniapp/workloads/solver/blocked_work.hpp"
#include "miniapp/workloads/solver/kernels.hpp"

#include <algorithm>
#include <cstdint>

namespace miniapp::solver::blocked {

// One team's arrival at a resident leaf's barrier, after its writes: it adds itself to the count
// and waits until the count reaches `target` (every team's arrival at this barrier). False where
// the barrier was given up: by this team after `spin_limit` spins (a team it waits for is not
// running), or by another. The count is read with volatile loads (past a GPU's L1).
template <class Member>
KOKKOS_INLINE_FUNCTION bool leaf_barrier(const Member& team, int* count, int* given_up, const int target,
                                         const std::int64_t spin_limit) {
  Kokkos::memory_fence();
  team.team_barrier();
  int passed = 0;
  Kokkos::single(
      Kokkos::PerTeam(team),
      [&](int& through) {
        Kokkos::atomic_add(count, 1);
        const volatile int* arrived = count;
        const volatile int* abandoned = given_up;
        through = 1;
        for (std::int64_t spins = 0; *arrived < target; ++spins) {
          if (*abandoned != 0) {
            through = 0;
            break;
          }
          if (spins >= spin_limit) {
            Kokkos::atomic_exchange(given_up, 1);
            through = 0;
            break;
          }
        }
      },
      passed);
  Kokkos::memory_fence();
  return passed != 0;
}

// How a leaf of `rows` rows is split for factor_leaf_resident: teams, rows a team, threads a
// team, scratch bytes a team; teams 0 where the leaf does not fit (a team's rows beyond the
// level-0 scratch) or the work space has no slots.
struct ResidentShape {
  int teams = 0, rows = 0, threads = 0;
  std::size_t bytes = 0;
};

template <class Scalar, class Space>
using ResidentRows =
    Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
template <class Space>
using ResidentPositions = Kokkos::View<int*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// As many teams as the rows ask for (Work::resident_team_rows each), no more than can run at once:
// on a device one a multiprocessor (its concurrency over 2048 threads: a team of at most 256
// threads and 36 KB of scratch always fits one), on a host space one a thread.
template <class Scalar, class Space>
ResidentShape resident_shape(const Space& space, const Work<Scalar, Space>& w, const int rows) {
  const int running = std::max(1, is_host_space<Space>() ? static_cast<int>(space.concurrency())
                                                         : static_cast<int>(space.concurrency() / 2048));
  const int wanted = (rows + w.resident_team_rows - 1) / std::max(1, w.resident_team_rows);
  const int slots = static_cast<int>(w.leaf_slots.extent(0) / 2);
  ResidentShape shape;
  shape.teams = std::min({w.resident_teams > 0 ? w.resident_teams : std::min(wanted, running), slots, rows});
  if (shape.teams <= 0) return ResidentShape{};  // no slots allocated (Work::allocate_resident_slots)
  shape.rows = (rows + shape.teams - 1) / shape.teams;
  shape.teams = (rows + shape.rows - 1) / shape.rows;  // none without rows
  shape.threads = is_host_space<Space>() ? 1 : std::min(256, (shape.rows + 31) / 32 * 32);
  // the rows at an odd stride (kLeaf + 1): a warp's threads read their rows' values in different banks
  shape.bytes = ResidentRows<Scalar, Space>::shmem_size(shape.rows, kLeaf + 1) +
                ResidentPositions<Space>::shmem_size(shape.rows);
  if (shape.bytes > team_scratch_limit<Space>(0)) shape.teams = 0;
  return shape;
}

// The resident leaf's kernel (factor_leaf_resident): a functor holding only the Views it uses,
// so that its arguments stay out of constant memory (whose launches wait on the host for the
// previous one's end).
template <class Scalar, class Space>
struct ResidentLeaf {
  using W = Work<Scalar, Space>;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using MaxLoc = Kokkos::MaxLoc<Scalar, int>;
  using Best = typename MaxLoc::value_type;
  // A team's share of the leaf: its rows and their positions (in scratch), the first's leaf row.
  struct Share {
    ResidentRows<Scalar, Space> part;
    ResidentPositions<Space> position;
    int first, mine;
  };

  decltype(W::lu) lu;
  typename W::Info info;
  decltype(W::pivots) pivots;
  decltype(W::scale) scale;
  decltype(W::leaf_barrier) barrier;  // (0) the arrivals, (1) given up
  decltype(W::leaf_slots) slots;
  decltype(W::leaf_slot_rows) slot_rows;
  int s, c0, rows, width, teams, per_team, slot_count, base;
  std::int64_t spin_limit;
  Scalar tiny_factor;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    if (info(s) != 0 || *static_cast<const volatile int*>(&barrier(1)) != 0) return;
    const int t = team.league_rank();
    const Share share{ResidentRows<Scalar, Space>(team.team_scratch(0), per_team, kLeaf + 1),
                      ResidentPositions<Space>(team.team_scratch(0), per_team), t * per_team,
                      rows - t * per_team < per_team ? rows - t * per_team : per_team};
    Best best;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, 0, share.mine),
        [&](const int r, Best& b) {
          for (int c = 0; c < width; ++c) share.part(r, c) = lu(c0 + share.first + r, c0 + c);
          share.position(r) = share.first + r;
          const Scalar v = compat::math::fabs(share.part(r, 0));
          if (v > b.val) b.val = v, b.loc = r;
        },
        MaxLoc(best));
    if (!publish(team, share, best, t, 0)) return;
    for (int j = 0; j < width; ++j) {
      Best winner;
      const int parity = (j % 2) * slot_count;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, 0, teams),
          [&](const int u, Best& b) {
            const Scalar v = read(slots, parity + u, kValueColumn);
            if (v > b.val) b.val = v, b.loc = u;
          },
          MaxLoc(winner));
      if (!(winner.val > tiny_factor * scale())) {
        if (t == 0) Kokkos::single(Kokkos::PerTeam(team), [&]() { info(s) = c0 + j + 1; });
        return;
      }
      const Best candidate = eliminate(team, share, j, parity + winner.loc);
      if (j + 1 == width) break;
      if (!publish(team, share, candidate, (1 - j % 2) * slot_count + t, j + 1)) return;
    }
    // Every team read its rows of lu before the first barrier: the rows go where they belong.
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, share.mine), [&](const int r) {
      for (int c = 0; c < width; ++c) lu(c0 + share.position(r), c0 + c) = share.part(r, c);
    });
  }

 private:
  static constexpr int kValueColumn = kLeaf;  // a slot's |value|

  template <class V>
  KOKKOS_INLINE_FUNCTION static typename V::value_type read(const V& v, const int i, const int j) {
    return *static_cast<const volatile typename V::value_type*>(&v(i, j));
  }

  // The team's best candidate into slot row `slot` (its row's values, |value| in kValueColumn, its
  // leaf row and position; no candidate: -1, below every |value|), then barrier number `number`,
  // which makes every team's visible: false where it was given up.
  KOKKOS_INLINE_FUNCTION bool publish(const Member& team, const Share& share, const Best& best, const int slot,
                                      const int number) const {
    team.team_barrier();  // the rows the candidate's threads wrote
    const bool some = best.loc >= 0 && best.loc < share.mine;
    const int value_column = kValueColumn;  // Views take indices by reference: not the host's constant
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, width + 1), [&](const int c) {
      slots(slot, c < width ? c : value_column) = !some ? Scalar(-1) : c < width ? share.part(best.loc, c) : best.val;
    });
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      slot_rows(slot, 0) = some ? share.first + best.loc : -1;
      slot_rows(slot, 1) = some ? share.position(best.loc) : -1;
    });
    return leaf_barrier(team, &barrier(0), &barrier(1), base + teams * (number + 1), spin_limit);
  }

  // Column j against the pivot in slot row `slot`: LAPACK's swap in the positions (the pivot row
  // to j, the row at j to where the pivot was), the team's other rows not yet chosen eliminated
  // as the one team does; returns the team's best candidate for column j + 1.
  KOKKOS_INLINE_FUNCTION Best eliminate(const Member& team, const Share& share, const int j, const int slot) const {
    const int p = read(slot_rows, slot, 0), q = read(slot_rows, slot, 1);
    Scalar u[kLeaf];
    MINIAPP_UNROLL
    for (int c = 0; c < kLeaf; ++c) u[c] = c > j && c < width ? read(slots, slot, c) : Scalar(0);
    const Scalar inverse_pivot = Scalar(1) / read(slots, slot, j);
    if (team.league_rank() == 0) Kokkos::single(Kokkos::PerTeam(team), [&]() { pivots(c0 + j) = c0 + q; });
    const int next = j + 1 < width ? j + 1 : j;  // past the leaf's last column the search is idle
    Best candidate;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, 0, share.mine),
        [&](const int r, Best& b) {
          if (share.first + r == p) {
            share.position(r) = j;
            return;
          }
          if (share.position(r) == j) share.position(r) = q;
          if (share.position(r) < j) return;  // a pivot row of an earlier column
          eliminate_row_registers(share.part, r, j, width, next, inverse_pivot, u, b);
        },
        MaxLoc(candidate));
    return candidate;
  }
};

// Devices, leaves of Work::resident_leaf_rows rows or more: the same elimination (the same
// arithmetic, so the same pivots and factors) in one launch. The leaf's rows are split among
// teams that all run at once, each keeping its rows in team scratch for the whole leaf, with the
// position each row has in LAPACK's order. Before each column the teams meet at a barrier in
// global memory, each having published its best candidate for that column's pivot with the
// candidate's row (Work::leaf_slots); each team then picks the same winner from the slots,
// eliminates its rows against it and finds its next candidate. At the end each team writes its
// rows where their positions say. A column costs a barrier: no launch, no reduction kernel (the
// over-device form), no pass of every row through one multiprocessor (one team). A barrier
// given up (the teams were not all running: a GPU shared with others, say) ends the leaf and
// every later resident leaf of the system at once; solve_system then solves the system again
// without them. False where the leaf does not fit (resident_shape).
template <class Scalar, class Space, MINIAPP_KERNEL_UNIT>
bool factor_leaf_resident(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  using Leaf = ResidentLeaf<Scalar, Space>;
  static_assert(sizeof(Leaf) <= 512, "over 512 bytes, Kokkos would pass the kernel's arguments through constant memory");
  const int rows = w.n() - c0;
  const int width = c1 - c0;
  const ResidentShape shape = resident_shape(space, w, rows);
  if (shape.teams == 0) return false;
  const Leaf leaf{w.lu,
                  w.info,
                  w.pivots,
                  w.scale,
                  w.leaf_barrier,
                  w.leaf_slots,
                  w.leaf_slot_rows,
                  w.system,
                  c0,
                  rows,
                  width,
                  shape.teams,
                  shape.rows,
                  static_cast<int>(w.leaf_slots.extent(0) / 2),
                  w.resident_arrivals,
                  w.resident_spin_limit,
                  tiny_pivot_factor<Scalar>(w.lu.extent(0))};
  w.resident_arrivals += shape.teams * width;
  Kokkos::TeamPolicy<Space> policy(space, shape.teams, shape.threads);
  policy.set_scratch_size(0, Kokkos::PerTeam(shape.bytes));
  Kokkos::parallel_for("solver::dense-leaf-resident", policy, leaf);
  return true;
}

// A leaf by the space's form: on devices tall leaves resident (from Work::resident_leaf_rows,
// where they fit) or over the whole device (from Work::wide_leaf_rows), the rest in one team.
template <Form F, class Scalar, class Space>
void factor_leaf(const Space& space, const Work<Scalar, Space>& w, int c0, int c1) {
  if constexpr (kDeviceForm<F, Space>) {
    const int rows = w.n() - c0;
    if (rows >= w.resident_leaf_rows && factor_leaf_resident(space, w, c0, c1)) return;
    if (rows >= w.wide_leaf_rows) return factor_leaf_over_device(space, w, c0, c1);
  }
  factor_leaf_one_team<F>(space, w, c0, c1);
}

}  // namespace miniapp::solver::blocked
