#pragma once
// A fused gradient step in one launch on device spaces: TeamGradient's pass (team_gradient.hpp),
// the teams' totals added by the last teams to finish, and the step's update, where
// team_gradient_sums and the update take three launches.

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/regression/team_gradient_forms.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace miniapp::regression {

// A whole gradient step in one launch: TeamGradient's teams each write their totals and count
// themselves done; the last team of each group of kStepGroup teams adds the group's totals, and
// the last group to finish adds the groups' totals into sums and runs the step's update (Update:
// StepUpdate, kernels.hpp). As separate kernels (team_gradient_sums, then the update's launch),
// the totals kernel and the one-thread update took a fifth of a fused step at 10^6 x 51 float64
// on the H200 (fenced kernel times, docs/tuning-notes.md): two launches and their tails. In
// two levels, since one team reading every team's totals (1117 x 51 at 10^6 rows on an H200, more
// at 10^5) would wait on L2 some 60 times over; a group is 32 x 51 values, the groups' rows 35 x 51.
// The sums come out the same whichever teams finish last: each level adds its rows in the same
// order (add_rows). Ordering: each thread fences after its writes before its team counts itself;
// the team that counts last fences and reads the others' rows with volatile loads (past a GPU's
// non-coherent L1). It sets the count it completed back to 0 for the next launch.
inline constexpr int kStepGroup = 32;

// The groups of kStepGroup teams of a step in one launch.
constexpr std::int64_t team_gradient_step_groups(const std::int64_t teams) {
  return (teams + kStepGroup - 1) / kStepGroup;
}

template <class F, class Sums, class Update>
struct TeamGradientStep {
  using Member = typename F::Member;
  using Scalar = typename Sums::non_const_value_type;
  F f;
  typename F::Partials groups;  // a row of totals per group, LayoutLeft as f.partials
  Sums sums;
  Kokkos::View<unsigned*, typename F::MemorySpace> done;  // teams done per group, then groups done
  Update update;
  std::int64_t step;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const typename F::Scratch part(team.team_scratch(0), team.team_size(), f.value_count);
    f.totals(team, part);
    const auto teams = static_cast<std::int64_t>(f.partials.extent(0));
    const std::int64_t g = team.league_rank() / kStepGroup, first = g * kStepGroup;
    const std::int64_t members = teams - first < kStepGroup ? teams - first : kStepGroup;
    if (!last_to_count(team, g, members)) return;
    add_rows(team, part, f.partials.data(), teams, first, members, [&](const int j, const Scalar v) {
      groups(g, j) = v;
    });
    const auto group_count = static_cast<std::int64_t>(groups.extent(0));
    if (!last_to_count(team, group_count, group_count)) return;
    add_rows(team, part, groups.data(), group_count, 0, group_count, [&](const int j, const Scalar v) { sums(j) = v; });
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() { update(step); });
  }

  // Whether this team is the last of `of` to count itself on done(c) (which it then sets back to
  // 0): after the team's writes are out, and with the others' visible to it when it is.
  KOKKOS_INLINE_FUNCTION bool last_to_count(const Member& team, const std::int64_t c, const std::int64_t of) const {
    Kokkos::memory_fence();
    team.team_barrier();
    unsigned before = 0;
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](unsigned& b) {
          b = Kokkos::atomic_fetch_add(&done(c), 1u);
          if (b + 1 == static_cast<unsigned>(of)) done(c) = 0u;
        },
        before);
    if (before + 1 != static_cast<unsigned>(of)) return false;
    Kokkos::memory_fence();
    return true;
  }

  // out(j, the sum of rows(first + o, j) for o < count), rows LayoutLeft with `stride` rows (a
  // value's rows contiguous). The team's lanes take a value each, `slices` lanes to a value (as
  // many as the team has for all values, at most one a thread: `part` holds a row of values a
  // thread), each adding every slices-th row with four loads in flight; then each value's slices
  // are added in order. The order depends on count and the team's shape only.
  template <class Out>
  KOKKOS_INLINE_FUNCTION void add_rows(const Member& team, const typename F::Scratch& part, const Scalar* rows,
                                       const std::int64_t stride, const std::int64_t first, const std::int64_t count,
                                       const Out& out) const {
    const int values = static_cast<int>(f.value_count), s = F::slices(team.team_size(), values, team.team_size());
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, s * values), [&](const int e) {
      const int slice = e % s, j = e / s;
      const volatile Scalar* r = rows + static_cast<std::int64_t>(j) * stride + first;
      Scalar a[4] = {Scalar(0), Scalar(0), Scalar(0), Scalar(0)};
      std::int64_t o = slice;
      for (; o + 3 * s < count; o += 4 * s) {
        MINIAPP_UNROLL
        for (int c = 0; c < 4; ++c) a[c] += r[o + c * s];
      }
      for (; o < count; o += s) a[0] += r[o];
      part(slice, j) = (a[0] + a[1]) + (a[2] + a[3]);
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, values), [&](const int j) {
      Scalar total = part(0, j);
      for (int o = 1; o < s; ++o) total += part(o, j);
      out(j, total);
    });
  }
};

// The partials a step in one launch takes (team_gradient_step): team_gradient_partials_size's rows
// of the teams' totals, then a row for each group.
template <class Scalar, class Space, int Lanes = kTeamGradientLanes<Scalar>>
std::size_t team_gradient_step_partials_size(std::size_t rows, std::size_t cols, const Space& space = Space()) {
  const std::int64_t teams = TeamGradient<Scalar, Space, Lanes>::teams(rows, space);
  return static_cast<std::size_t>(teams + team_gradient_step_groups(teams)) * (cols + 1);
}

// The counts a step in one launch needs (team_gradient_step): one per group, one for the groups.
template <class Scalar, class Space, int Lanes = kTeamGradientLanes<Scalar>>
std::size_t team_gradient_step_counts(std::size_t rows, const Space& space = Space()) {
  return static_cast<std::size_t>(team_gradient_step_groups(TeamGradient<Scalar, Space, Lanes>::teams(rows, space))) + 1;
}

// The partials (and the counts, `counts` true) that fused_sums and fused_step need on a device
// space for rows of `cols` columns, whichever of their forms runs: the register, narrow and
// scratch forms' lanes (and so their teams) differ.
template <class Scalar, class Space>
std::size_t fused_partials_size(std::size_t rows, std::size_t cols, const Space& space = Space(),
                                const bool counts = false) {
  std::size_t size = 0;
  for_each_team_form<Scalar, Space>(cols, [&](auto lanes, auto) {
    constexpr int kLanes = decltype(lanes)::value;
    size = std::max(size, counts ? team_gradient_step_counts<Scalar, Space, kLanes>(rows, space)
                                 : team_gradient_step_partials_size<Scalar, Space, kLanes>(rows, cols, space));
  });
  return size;
}

// Step `step` of a fit in one launch (TeamGradientStep): TeamGradient's pass as in
// team_gradient_sums, the teams' totals into sums, then update(step). `partials`: at least
// team_gradient_step_partials_size values; `done`: at least team_gradient_step_counts, all 0
// before the first call (a new View's are), and 0 again after each.
template <int Lanes = 0, int Chunk = kTeamGradientChunk, int RegisterColumns = 0, class Space, class X, class Y,
          class Beta, class Partials, class Sums, class Done, class Update, MINIAPP_KERNEL_UNIT>
void team_gradient_step(const Space& space, const X& x, const Y& y, const Beta& beta, const Partials& partials,
                        const Sums& sums, const Done& done, const Update& update, const std::int64_t step) {
  const auto f = team_gradient<Lanes, Chunk, RegisterColumns>(space, x, y, beta, partials, sums);
  using F = std::decay_t<decltype(f)>;
  const auto teams = static_cast<std::int64_t>(f.partials.extent(0)), groups = team_gradient_step_groups(teams);
  const std::size_t values = f.value_count, used = static_cast<std::size_t>(teams + groups) * values;
  if (partials.span() < used)
    throw std::logic_error("team_gradient_step: partials hold " + std::to_string(partials.span()) + " values, not " +
                           std::to_string(used) + " (team_gradient_step_partials_size)");
  if (done.extent(0) < static_cast<std::size_t>(groups + 1))
    throw std::logic_error("team_gradient_step: " + std::to_string(done.extent(0)) + " counts, not " +
                           std::to_string(groups + 1) + " (team_gradient_step_counts)");
  const typename F::Partials group_totals(partials.data() + static_cast<std::size_t>(teams) * values,
                                          static_cast<std::size_t>(groups), values);
  using Step = TeamGradientStep<F, Sums, Update>;
  const Step s{f, group_totals, sums, done, update, step};
  // Passed as the kernel's arguments (HintLightWeight): functors over 512 bytes, as this one is,
  // otherwise go through constant memory, whose launch waits on the host for the previous
  // constant-memory kernel to finish before copying the next functor in (Kokkos'
  // Cuda_KernelLaunch.hpp, 3.4 to 5.x; HIP alike): a fit's steps would not queue on the device,
  // each would pay its launch after the one before had ended. Arguments hold up to 4 KiB.
  static_assert(sizeof(Step) < 3 * 1024, "the step's functor must stay within the kernel argument limit");
  Kokkos::parallel_for(
      "regression::fused-step",
      Kokkos::Experimental::require(f.policy(space), Kokkos::Experimental::WorkItemProperty::HintLightWeight), s);
}

}  // namespace miniapp::regression
