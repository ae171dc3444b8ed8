#pragma once
// dense-blocked's shared pieces: the work space of one system, the constants of the recursion,
// the form of the triangular solves per space, and the gemm update every step goes through
// (blocked_lu.hpp is the factorisation, blocked_solves.hpp the triangular solves).

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/workloads/solver/params.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace miniapp::solver::blocked {

// Columns a leaf of the recursive panel factorisation handles one at a time: the leaf's rows of
// n x kLeaf values stay in cache while each column is eliminated.
inline constexpr int kLeaf = 16;
// Rows per diagonal block of the two final triangular solves.
inline constexpr int kSolveBlock = 64;
// Threads of a panel leaf's one team on devices (Work::panel_threads; fewer where the kernel's
// registers do not allow as many). The leaf is a pass over up to n rows per column on one
// multiprocessor, whose loads more warps keep in flight: on the H200 at n = 4096 the leaves took
// over half of dense-blocked's time with 256 threads, and 1024 was the fastest of 64, 256 and 1024
// (docs/tuning-notes.md, "solver: dense-blocked's triangular solves"); the benchmarks
// solver-dense-blocked-panel64 and -panel256 time fewer threads beside this.
inline constexpr int kPanelThreads = 1024;
// Rows of a leaf from which devices factor it over the whole device, a launch per column
// (factor_leaf_over_device), rather than in one team (Work::wide_leaf_rows). One team's column
// at 2048-4096 rows took several times what its bytes take on the H200; a launch costs a few
// microseconds and needs no rendezvous of a thousand threads. Timed against every leaf in one
// team and every leaf over the device (solver-dense-blocked-leaf-*), the launch per column paid
// only on the tallest leaves (docs/tuning-notes.md).
inline constexpr int kWideLeafRows = 2048;
// Rows of a leaf from which devices factor it in one launch with its rows resident in the team
// scratch of teams that are all running at once, meeting at a barrier in global memory once a
// column (factor_leaf_resident; Work::resident_leaf_rows): a column there costs a barrier (a
// counter in L2) where the over-device form pays a launch and a reduction kernel, and the one
// team a pass through one multiprocessor. Every leaf, where it fits (else the forms above): of
// the thresholds and team sizes timed on the H200 (solver-dense-blocked-leaf-*), every leaf in
// teams of 64 rows was the fastest, and the first form within 3x of cuSOLVER
// (docs/results/README.md, the H200 of 2026-12-01).
inline constexpr int kResidentLeafRows = 0;
// Rows each team of a resident leaf aims for, a row a thread (Work::resident_team_rows): 64, the
// fastest of 64, 128 and 256 in the same runs (more teams at each barrier, a shorter pass each).
inline constexpr int kResidentTeamRows = 64;
// The most teams a resident leaf is split among (the slots of their pivot candidates).
inline constexpr int kResidentTeamsMax = 1024;
// Spins a team waits at a resident leaf's barrier before it gives the leaf up (Work::
// resident_spin_limit): seconds on a GPU (an L2 round trip a spin), and on a host thread, far
// above the microseconds a barrier takes when every team is running.
template <class Space>
inline constexpr std::int64_t kResidentSpinLimit = is_host_space<Space>() ? std::int64_t(1) << 31 : std::int64_t(1) << 22;
// Columns one thread of the swap and triangular-solve kernels handles: a run of contiguous values
// to vectorise over on a CPU; one column per thread (neighbours coalesce) on a GPU.
template <class Space>
inline constexpr int kColumnChunk = is_host_space<Space>() ? 64 : 1;

// Which forms of the triangular solves run: the space's own (OfSpace: the host forms on host
// spaces, the device forms on devices), or the ones named, so that the tests run the device forms
// on host spaces as well.
enum class Form { OfSpace, Host, Device };
template <Form F, class Space>
inline constexpr bool kDeviceForm = F == Form::Device || (F == Form::OfSpace && !is_host_space<Space>());

// Where the recursive factorisation and triangular solve halve an extent: a multiple of the leaf,
// at least one leaf.
inline int recursion_split(int extent) { return std::max(kLeaf, extent / 2 / kLeaf * kLeaf); }

// The work space of one system's factorisation, reused system after system; `info` is the
// solver's per-system output.
template <class Scalar, class Space>
struct Work {
  using Device = Kokkos::Device<Space, typename Space::memory_space>;
  // A leaf's rows contiguous on a CPU; on a GPU, a column's values contiguous across threads.
  using LeafLayout = std::conditional_t<is_host_space<Space>(), Kokkos::LayoutRight, Kokkos::LayoutLeft>;
  using Info = Kokkos::View<int*, Kokkos::LayoutRight, typename Space::memory_space>;

  using Best = typename Kokkos::MaxLoc<Scalar, int, typename Space::memory_space>::value_type;

  explicit Work(std::size_t n)
      : lu("solver::lu", n, n),
        rhs("solver::rhs", n),
        pivots("solver::pivots", n),
        leaf("solver::leaf", n, kLeaf),
        scale("solver::scale"),
        leaf_chosen("solver::leaf-chosen", n),
        leaf_moves("solver::leaf-moves", 1 + 4 * kLeaf),
        leaf_best{Kokkos::View<Best, typename Space::memory_space>("solver::leaf-best-0"),
                  Kokkos::View<Best, typename Space::memory_space>("solver::leaf-best-1")},
        leaf_barrier("solver::leaf-barrier", 2) {}

  // The resident leaves' slots, allocated where a device form may first use them (solve_system):
  // 2 x min(n, kResidentTeamsMax) x (kLeaf + 1) values, which no other form needs.
  void allocate_resident_slots() {
    if (leaf_slots.extent(0) != 0) return;
    const std::size_t slots = 2 * std::min<std::size_t>(lu.extent(0), kResidentTeamsMax);
    leaf_slots = decltype(leaf_slots)("solver::leaf-slots", slots, kLeaf + 1);
    leaf_slot_rows = decltype(leaf_slot_rows)("solver::leaf-slot-rows", slots, 2);
  }

  Kokkos::View<Scalar**, Kokkos::LayoutRight, Device> lu;
  Kokkos::View<Scalar*, Device> rhs;
  Kokkos::View<int*, Device> pivots;
  Kokkos::View<Scalar**, LeafLayout, Device> leaf;  // the leaf of the panel being factored
  Kokkos::View<Scalar, typename Space::memory_space> scale;
  // factor_leaf_over_device's state: the column at which each leaf row was chosen as pivot
  // (kLeaf: not yet), the table of the leaf's swaps (leaf_moves), and the pivot each column's
  // launch finds for the next (alternating, so that no launch reads what it writes).
  Kokkos::View<int*, Device> leaf_chosen;
  Kokkos::View<int*, Device> leaf_moves;
  Kokkos::View<Best, typename Space::memory_space> leaf_best[2];
  // factor_leaf_resident's state: the barrier's count of arrivals and whether a team gave up
  // waiting (reset with the system's copy), and each team's candidate for the next pivot (two
  // rows per team, alternating by column: its row's values, then |value| in column kLeaf; its
  // leaf row and position in leaf_slot_rows; empty until allocate_resident_slots).
  Kokkos::View<int*, Device> leaf_barrier;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Device> leaf_slots;
  Kokkos::View<int**, Kokkos::LayoutRight, Device> leaf_slot_rows;
  Info info;
  int system = 0;
  // Threads of the panel leaves' team on devices (whole_space_team's cap there).
  int panel_threads = kPanelThreads;
  // Leaves of at least this many rows are factored over the whole device (device forms).
  int wide_leaf_rows = kWideLeafRows;
  // Leaves of at least this many rows are factored resident (device forms), where they fit; rows
  // a team aims for; the teams forced (0: as the rows and the space allow; the tests force more
  // than can run at once); spins before a barrier is given up.
  int resident_leaf_rows = kResidentLeafRows;
  int resident_team_rows = kResidentTeamRows;
  int resident_teams = 0;
  std::int64_t resident_spin_limit = kResidentSpinLimit<Space>;
  // The host's account of the system being solved: barrier arrivals launched so far (each
  // barrier's target; above 0 once a resident leaf was launched); systems solved again because a
  // resident leaf was given up (solve_system).
  mutable int resident_arrivals = 0;
  int resident_fallbacks = 0;
  int n() const { return static_cast<int>(lu.extent(0)); }
};

// One team spanning the host's threads, or a large block on a GPU (at most device_cap threads,
// at most what the kernel's registers allow), for the sequential steps.
template <class Space, class Functor>
int whole_space_team(const Space& space, const Functor& f, int device_cap = 256) {
  const int largest = Kokkos::TeamPolicy<Space>(space, 1, 1).team_size_max(f, Kokkos::ParallelForTag());
  return std::max(1, std::min(largest, is_host_space<Space>() ? static_cast<int>(space.concurrency()) : device_cap));
}

// sum_j m(i, j) v(j) over j in [j0, j1), in four independent sums: one running sum would be a
// chain of dependent adds the compiler may not reorder.
template <class MatrixView, class VectorView>
KOKKOS_INLINE_FUNCTION typename VectorView::non_const_value_type row_times_vector(const MatrixView& m, int i, int j0,
                                                                                 int j1, const VectorView& v) {
  typename VectorView::non_const_value_type s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int j = j0;
  for (; j + 3 < j1; j += 4) {
    s0 += m(i, j) * v(j);
    s1 += m(i, j + 1) * v(j + 1);
    s2 += m(i, j + 2) * v(j + 2);
    s3 += m(i, j + 3) * v(j + 3);
  }
  for (; j < j1; ++j) s0 += m(i, j) * v(j);
  return (s0 + s1) + (s2 + s3);
}

// A(r0:r1, c0:c1) -= A(r0:r1, k0:k1) A(k0:k1, c0:c1), on the default instance of the space
// (compat::gemm_nn: KokkosBlas::gemm, or gemv for one column).
template <class Scalar, class Space>
void update(const Space&, const Work<Scalar, Space>& w, int r0, int r1, int k0, int k1, int c0, int c1) {
  using Range = Kokkos::pair<int, int>;
  if (r1 <= r0 || c1 <= c0 || k1 <= k0) return;
  compat::gemm_nn(Scalar(-1), Kokkos::subview(w.lu, Range(r0, r1), Range(k0, k1)),
                  Kokkos::subview(w.lu, Range(k0, k1), Range(c0, c1)), Scalar(1),
                  Kokkos::subview(w.lu, Range(r0, r1), Range(c0, c1)));
}

}  // namespace miniapp::solver::blocked
