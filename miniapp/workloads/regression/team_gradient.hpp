#pragma once
// The fused gradient sums shaped for a GPU: teams of 256 vector lanes per block of rows, each
// thread of Lanes lanes taking one row at a time with its lanes across the row's columns.
// FusedGradient's form (kernels.hpp), a thread per four rows with an array reduction of cols + 1
// values per thread, reads X across rows, 51 values apart, and keeps cols + 1 partial sums per
// thread. Here a thread reads a row as one contiguous stretch, its lanes keep the row's sums in
// the team's scratch (lane j's columns in its thread's row of it), and each team writes its totals
// to its row of `partials`, which a second, small kernel adds up (add_team_totals; the teams
// cannot reduce into the sums themselves: a TeamPolicy reduction of an array of runtime length
// with a vector length above 1 is refused by Kokkos' CUDA backend, 4.6 at least), or, in a step
// in one launch, the last teams to finish (TeamGradientStep, team_gradient_step.hpp). A lane's
// columns are read kTeamGradientChunk at a time, so that a step's loads are in flight together.
// fused_sums uses it on device spaces; written for every space, so that the host tests check its
// sums against FusedGradient's.
//
// The register form (RegisterColumns > 0, rows of up to that many columns): per row the scratch
// form above issues five memory operations per column (x and beta for the dot product, x again,
// and a load and a store of the lane's sum in scratch), of which only the first reads memory that
// the row has not already brought in, so a step is bound by those instructions, not by memory.
// Here each lane holds its columns of beta, of the row and of the sums in registers, so a row
// costs one load per column; the sums go to scratch once per thread, after its last row.
// The staged form (Staged): team_gradient_staged.hpp.
//
// What each choice below measured on GPUs (lanes, chunks, launch bounds, the register and narrow
// forms): docs/tuning-notes.md, "regression: the fused gradient".

#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/regression/team_gradient_staged.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace miniapp::regression {

// Columns of a row one lane reads per step of TeamGradient (lane_columns).
inline constexpr int kTeamGradientChunk = 8;
// The widest row TeamGradient's register form takes (fused_sums): 64 columns, 16 values of each
// kind per lane (kTeamGradientRegisterLanes, 4).
inline constexpr int kTeamGradientRegisterColumns = 64;
// TeamGradient's lanes across a row on device spaces, by the size of its values: 4 for float32,
// 8 for float64 (a 128-byte line of a row in flight per thread and step for float32, 512 bytes
// for float64; the fastest of 2 to 32 lanes in each).
template <class Scalar>
inline constexpr int kTeamGradientLanes = sizeof(Scalar) <= 4 ? 4 : 8;
// The register form's lanes, in both precisions (the fastest of 4, 8 and 16 in each).
inline constexpr int kTeamGradientRegisterLanes = 4;
// Whether the register form (on kTeamGradientRegisterLanes) takes rows of `cols` columns.
constexpr bool team_gradient_register_form_takes(const std::size_t cols) {
  return cols >= static_cast<std::size_t>(kTeamGradientRegisterLanes) &&
         cols <= static_cast<std::size_t>(kTeamGradientRegisterColumns);
}
// The narrow form: the register form on one lane, a thread a row, for rows too short for
// kTeamGradientRegisterLanes (1 to 3 columns: the single-variable model's 2), which
// FusedGradient's array reduction took at several times the time of a read of X.
inline constexpr int kTeamGradientNarrowColumns = kTeamGradientRegisterLanes - 1;
constexpr bool team_gradient_narrow_form_takes(const std::size_t cols) {
  return cols >= 1 && cols <= static_cast<std::size_t>(kTeamGradientNarrowColumns);
}

// The teams of 256 lanes each a GPU multiprocessor is to hold at once for TeamGradient's form on
// `Lanes` lanes with `RegisterColumns` (the compiler then keeps each thread's registers to
// 65536 / (256 x that), as a kernel's launch bounds ask), 0 where the compiler chooses. The
// register form in float32 on 4 lanes: 3 (80 registers at most), as it held before the slices of
// the team's totals took it to 93 registers, 2 teams and a longer time (docs/tuning-notes.md);
// float64's values alone take 96 registers, so 3 teams would spill: it holds 2 unbounded. Benchmarks
// regression-sums-registers-lanes4 against -unbounded and -teams4 (float32).
// With Rows > 1 (below) a thread holds that many rows of values more: 0, the compiler's choice.
template <class Scalar, int Lanes, int RegisterColumns, int Rows = 1>
constexpr int team_gradient_min_teams() {
  return RegisterColumns > kTeamGradientNarrowColumns && Lanes == kTeamGradientRegisterLanes && sizeof(Scalar) <= 4 &&
                 Rows == 1
             ? 3
             : 0;
}

// Lanes: the vector lanes across a row on device spaces (at most a warp, 32), threads of
// 256 / Lanes lanes to a team, so a team has 256 lanes whatever the split. Host spaces: one lane,
// one thread. Chunk: the columns a lane reads per step. RegisterColumns: 0, the sums in scratch
// (any row length); else the register form for rows of at most that many columns, a lane's
// columns lane, lane + kLanes, ... (RegisterColumns / kLanes of them) held in registers.
// MinTeams: teams a multiprocessor holds at once, as launch bounds (above; 0 none, -1 the choice
// of team_gradient_min_teams); host spaces ignore it. Rows: the register form's rows a thread
// loads at once (in_registers_rows), 1 the workload's. Staged: the register form's rows through
// the team's scratch (staged_register_sums; X's rows contiguous), false the workload's.
template <class Scalar, class Space, int Lanes = kTeamGradientLanes<Scalar>, int Chunk = kTeamGradientChunk,
          int RegisterColumns = 0, int MinTeams = -1, int Rows = 1, bool Staged = false>
struct TeamGradient {
  static constexpr int kMinTeams = is_host_space<Space>() ? 0
                                   : MinTeams >= 0        ? MinTeams
                                                          : team_gradient_min_teams<Scalar, Lanes, RegisterColumns, Rows>();
  using Policy = std::conditional_t<kMinTeams == 0, Kokkos::TeamPolicy<Space>,
                                    Kokkos::TeamPolicy<Space, Kokkos::LaunchBounds<256, (kMinTeams > 0 ? kMinTeams : 1)>>>;
  using Member = typename Policy::member_type;
  using ExecutionSpace = Space;
  using MemorySpace = typename Space::memory_space;
  using Scratch = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static_assert(Lanes > 0 && Lanes <= 32 && 32 % Lanes == 0, "lanes: a power of two up to a warp");
  static constexpr int kLanes = is_host_space<Space>() ? 1 : Lanes;
  static constexpr int kThreads = is_host_space<Space>() ? 1 : 256 / Lanes;
  static constexpr int kPerLane = (RegisterColumns + kLanes - 1) / kLanes;
  static_assert(RegisterColumns >= 0 && kPerLane <= 64, "register form: at most 64 columns a lane");
  static_assert(Rows >= 1 && (Rows == 1 || RegisterColumns > 0), "rows at once: the register form's");
  static_assert(!Staged || (RegisterColumns > 0 && Rows == 1), "staged: the register form's, a row a thread");

  // One row of value_count totals per team, in one flat View (team_gradient_partials_size).
  using Partials = Kokkos::View<Scalar**, Kokkos::LayoutLeft, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const Scalar**, Kokkos::LayoutRight, MemorySpace> x;
  Kokkos::View<const Scalar*, Kokkos::LayoutRight, MemorySpace> y, beta;
  Partials partials;
  unsigned value_count;         // columns + 1
  std::int64_t rows_per_team;   // team_rows

  // A team's block of rows: 32 per thread (measured at 10^6 rows), fewer, down to one, where the
  // rows do not fill the space's resident threads 32 times over, so that a small problem still
  // spreads over the whole device (10^4 rows in blocks of 32 were 10 teams on a GPU of 132
  // multiprocessors).
  static std::int64_t team_rows(std::size_t rows, const Space& space) {
    const std::int64_t workers = space.concurrency() / kLanes > 0 ? space.concurrency() / kLanes : 1;
    const std::int64_t per_thread = static_cast<std::int64_t>(rows) / workers;
    return kThreads * (per_thread < 1 ? 1 : per_thread > 32 ? 32 : per_thread);
  }
  static std::int64_t teams(std::size_t rows, const Space& space) {
    return (static_cast<std::int64_t>(rows) + team_rows(rows, space) - 1) / team_rows(rows, space);
  }

  static std::size_t scratch_bytes(std::size_t cols) { return Scratch::shmem_size(kThreads, cols + 1); }
  Policy policy(const Space& space) const {
    const auto n = static_cast<std::int64_t>(x.extent(0));
    Policy p(space, static_cast<int>((n + rows_per_team - 1) / rows_per_team), kThreads, kLanes);
    p.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(value_count - 1)));
    return p;
  }

  // f(j) for the columns j of a row that `lane` takes (lane, lane + kLanes, ...), Chunk of them
  // per step, unrolled: a step's loads do not wait for each other, so a GPU thread has Chunk in
  // flight. ThreadVectorRange(team, cols) gave each lane the same columns in a loop with a
  // run-time trip count (Chunk = 1 here is that loop's shape; benchmark regression-sums-lanes8-c1).
  template <class F>
  KOKKOS_INLINE_FUNCTION static void lane_columns(const int lane, const int cols, const F& f) {
    for (int j0 = lane; j0 < cols; j0 += Chunk * kLanes) {
      MINIAPP_UNROLL
      for (int c = 0; c < Chunk; ++c) {
        const int j = j0 + c * kLanes;
        if (j < cols) f(j);
      }
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    // allocated once: each View made from team_scratch takes the next bytes of the team's scratch
    totals(team, Scratch(team.team_scratch(0), team.team_size(), value_count));
  }

  // The team's totals into its row of partials, through `part`, the team's scratch.
  KOKKOS_INLINE_FUNCTION void totals(const Member& team, const Scratch& part) const {
    if constexpr (Rows > 1) in_registers_rows(team, part);
    else if constexpr (Staged) staged_register_sums(*this, team, part);
    else if constexpr (RegisterColumns > 0) in_registers(team, part);
    else in_scratch(team, part);
    // the threads' sums, each in its row of scratch, added up into the team's row of partials:
    // `s` lanes a value, lane `slice` adding every s-th thread's row from its own into its own
    // (no other lane reads or writes that row of that value), then the s rows in order; a lane
    // a value adding all the team's rows (256 of them on one lane) waited on each in turn
    team.team_barrier();
    const int values = static_cast<int>(value_count), threads = team.team_size();
    const int s = slices(threads, values, threads < kTotalsSlices ? threads : kTotalsSlices);
    if (s > 1) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, s * values), [&](const int e) {
        const int slice = e % s, j = e / s;
        Scalar t = part(slice, j);
        for (int o = slice + s; o < threads; o += s) t += part(o, j);
        part(slice, j) = t;
      });
      team.team_barrier();
    }
    const int league = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, values), [&](const int j) {
      Scalar t = part(0, j);
      for (int o = 1; o < (s > 1 ? s : threads); ++o) t += part(o, j);
      partials(league, j) = t;
    });
  }
  // The most slices of a team's rows of sums per value (above): 16 at 256 threads, 16 + 16 adds.
  static constexpr int kTotalsSlices = 16;

  // Lanes a value when a team of `threads` threads adds up rows of `values` values: as many as
  // its lanes give every value, at least 1, at most `most`.
  KOKKOS_INLINE_FUNCTION static int slices(const int threads, const int values, const int most) {
    const int wide = threads * kLanes / values;
    return wide < 1 ? 1 : wide > most ? most : wide;
  }

  // The team's block of rows: [first, end).
  KOKKOS_INLINE_FUNCTION Kokkos::pair<std::int64_t, std::int64_t> block(const Member& team) const {
    const auto n = static_cast<std::int64_t>(x.extent(0));
    const std::int64_t first = team.league_rank() * rows_per_team;
    return {first, first + rows_per_team < n ? first + rows_per_team : n};
  }

  // The register form: lane l keeps beta(j), x(i, j) and its sum of x(i, j) r_i for its columns
  // j = l + c kLanes, c < kPerLane (zeros past the row's end), and every lane the loss sum.
  KOKKOS_INLINE_FUNCTION void in_registers(const Member& team, const Scratch& part) const {
    const int cols = static_cast<int>(value_count) - 1;
    Scalar b[kPerLane > 0 ? kPerLane : 1], g[kPerLane > 0 ? kPerLane : 1], v[kPerLane > 0 ? kPerLane : 1];
    Scalar loss = 0;
    hold_beta(team, b, g);
    const auto rows = block(team);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows.first, rows.second), [&](const std::int64_t i) {
      Scalar dot = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, kLanes),
          [&](const int lane, Scalar& d) {
            MINIAPP_UNROLL
            for (int c = 0; c < kPerLane; ++c) {
              const int j = lane + c * kLanes;
              v[c] = j < cols ? x(i, j) : Scalar(0);
            }
            MINIAPP_UNROLL
            for (int c = 0; c < kPerLane; ++c) d += v[c] * b[c];
          },
          dot);
      const Scalar r = dot - y(i);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int) {
        MINIAPP_UNROLL
        for (int c = 0; c < kPerLane; ++c) g[c] += v[c] * r;
      });
      loss += r * r;  // the same in every lane of the thread
    });
    held_sums_to_scratch(team, part, g, loss);
  }

  // The register form with Rows rows of a thread loaded at once: rows i, i + T, ..., i + (Rows -
  // 1) T of a team of T threads (the rows the thread takes in turn in in_registers, so its sums add
  // them in the same order: the same sums), with their y. On a GPU the one-row form took as long
  // a row in float32 as in float64 at the same teams a multiprocessor, for half the bytes: bound
  // by each row's chain (its loads, the dot product, the lanes' reduction, then y), one row in
  // flight a thread. Each row held costs registers (kPerLane values a lane): benchmarks
  // regression-sums-registers-lanes4-rows2 / -lanes8-rows2 against the one-row form.
  KOKKOS_INLINE_FUNCTION void in_registers_rows(const Member& team, const Scratch& part) const {
    const int cols = static_cast<int>(value_count) - 1, t = team.team_rank();
    const std::int64_t stride = team.team_size();
    Scalar b[kPerLane], g[kPerLane], v[Rows][kPerLane], yr[Rows];
    Scalar loss = 0;
    hold_beta(team, b, g);
    const auto rows = block(team);
    for (std::int64_t i0 = rows.first + t; i0 < rows.second; i0 += Rows * stride) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int lane) {
        MINIAPP_UNROLL
        for (int s = 0; s < Rows; ++s) {
          const std::int64_t i = i0 + s * stride;
          const bool in = i < rows.second;
          yr[s] = in ? y(i) : Scalar(0);
          MINIAPP_UNROLL
          for (int c = 0; c < kPerLane; ++c) {
            const int j = lane + c * kLanes;
            v[s][c] = in && j < cols ? x(i, j) : Scalar(0);
          }
        }
      });
      MINIAPP_UNROLL
      for (int s = 0; s < Rows; ++s) {
        if (i0 + s * stride >= rows.second) continue;  // past the block's end (the last rows only)
        Scalar dot = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, kLanes),
            [&](const int, Scalar& d) {
              MINIAPP_UNROLL
              for (int c = 0; c < kPerLane; ++c) d += v[s][c] * b[c];
            },
            dot);
        const Scalar r = dot - yr[s];
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int) {
          MINIAPP_UNROLL
          for (int c = 0; c < kPerLane; ++c) g[c] += v[s][c] * r;
        });
        loss += r * r;
      }
    }
    held_sums_to_scratch(team, part, g, loss);
  }

  // A register form's start: each lane's columns of beta in b (zeros past the row's end), its
  // sums in g zeroed.
  KOKKOS_INLINE_FUNCTION void hold_beta(const Member& team, Scalar* b, Scalar* g) const {
    const int cols = static_cast<int>(value_count) - 1;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int lane) {
      MINIAPP_UNROLL
      for (int c = 0; c < kPerLane; ++c) {
        const int j = lane + c * kLanes;
        b[c] = j < cols ? beta(j) : Scalar(0);
        g[c] = Scalar(0);
      }
    });
  }

  // A thread's sums held in registers (g: its lanes' columns, as in_registers holds them; loss:
  // the same in every lane) into its row of the team's scratch.
  KOKKOS_INLINE_FUNCTION void held_sums_to_scratch(const Member& team, const Scratch& part, const Scalar* g,
                                                   const Scalar loss) const {
    const int cols = static_cast<int>(value_count) - 1, t = team.team_rank();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int lane) {
      MINIAPP_UNROLL
      for (int c = 0; c < kPerLane; ++c) {
        const int j = lane + c * kLanes;
        if (j < cols) part(t, j) = g[c];
      }
    });
    Kokkos::single(Kokkos::PerThread(team), [&]() { part(t, cols) = loss; });
  }

  // The scratch form: a lane's sums in its thread's row of scratch, updated row by row.
  KOKKOS_INLINE_FUNCTION void in_scratch(const Member& team, const Scratch& part) const {
    const int cols = static_cast<int>(value_count) - 1, t = team.team_rank();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, static_cast<int>(value_count)),
                         [&](const int j) { part(t, j) = Scalar(0); });
    team.team_barrier();  // the loss sum is zeroed by one lane and added to by lane 0
    const auto rows = block(team);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows.first, rows.second), [&](const std::int64_t i) {
      Scalar dot = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, kLanes),
          [&](const int lane, Scalar& d) { lane_columns(lane, cols, [&](const int j) { d += x(i, j) * beta(j); }); },
          dot);
      const Scalar r = dot - y(i);
      // Each lane adds to its own columns of its thread's row: no two lanes or threads share a value.
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int lane) {
        lane_columns(lane, cols, [&](const int j) { part(t, j) += x(i, j) * r; });
      });
      Kokkos::single(Kokkos::PerThread(team), [&]() { part(t, cols) += r * r; });
    });
  }
};

// The teams' totals added up: sums(j) = the sum over teams of partials(team, j), a team per j
// with its lanes across the teams (partials is LayoutLeft: a value's totals are contiguous): half
// the time of a parallel_reduce over the teams with an array of the P + 2 values per thread.
template <class Space, class Partials, class Sums, MINIAPP_KERNEL_UNIT>
void add_team_totals(const Space& space, const Partials& partials, const Sums& sums) {
  using Scalar = typename Sums::non_const_value_type;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Member = typename Policy::member_type;
  constexpr int lanes = is_host_space<Space>() ? 1 : 32;
  const auto teams = static_cast<std::int64_t>(partials.extent(0));
  Kokkos::parallel_for(
      "regression::fused-team-totals", Policy(space, static_cast<int>(partials.extent(1)), 1, lanes),
      KOKKOS_LAMBDA(const Member& team) {
        const int j = team.league_rank();
        Scalar total = 0;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, teams), [&](const std::int64_t t, Scalar& s) { s += partials(t, j); }, total);
        Kokkos::single(Kokkos::PerThread(team), [&]() { sums(j) = total; });
      });
}

// TeamGradient's functor for one pass over x (team_gradient_sums), its partials checked.
template <int Lanes, int Chunk, int RegisterColumns, int MinTeams = -1, int Rows = 1, bool Staged = false, class Space,
          class X, class Y, class Beta, class Partials, class Sums>
auto team_gradient(const Space& space, const X& x, const Y& y, const Beta& beta, const Partials& partials,
                   const Sums&) {
  using Scalar = typename Sums::non_const_value_type;
  using F = TeamGradient<Scalar, Space, (Lanes > 0 ? Lanes : kTeamGradientLanes<Scalar>), Chunk, RegisterColumns,
                         MinTeams, Rows, Staged>;
  if (RegisterColumns > 0 && x.extent(1) > static_cast<std::size_t>(F::kPerLane) * F::kLanes)
    throw std::logic_error("team_gradient_sums: rows of " + std::to_string(x.extent(1)) +
                           " columns, the register form holds " + std::to_string(F::kPerLane * F::kLanes));
  if (Staged && x.extent(0) > 1 && x.stride(0) != x.extent(1))
    throw std::logic_error("team_gradient_sums: the staged form reads X's rows as one stretch, and they are " +
                           std::to_string(x.stride(0)) + " values apart, not " + std::to_string(x.extent(1)));
  const auto values = static_cast<unsigned>(x.extent(1) + 1);
  const std::int64_t teams = F::teams(x.extent(0), space);
  if (partials.span() < static_cast<std::size_t>(teams) * values)
    throw std::logic_error("team_gradient_sums: partials hold " + std::to_string(partials.span()) + " values, not " +
                           std::to_string(teams * values) + " (team_gradient_partials_size)");
  const typename F::Partials totals(partials.data(), static_cast<std::size_t>(teams), values);
  return F{x, y, beta, totals, values, F::team_rows(x.extent(0), space)};
}

// One pass over X by TeamGradient: the gradient sums and the sum of squared residuals into sums.
// `partials`: at least team_gradient_partials_size values of the space's memory. Lanes 0:
// kTeamGradientLanes of the sums' values. RegisterColumns > 0: the register form, for rows of at
// most that many columns (a wider X is refused). MinTeams, Rows, Staged: TeamGradient's.
template <int Lanes = 0, int Chunk = kTeamGradientChunk, int RegisterColumns = 0, int MinTeams = -1, int Rows = 1,
          bool Staged = false, class Space, class X, class Y, class Beta, class Partials, class Sums,
          MINIAPP_KERNEL_UNIT>
void team_gradient_sums(const Space& space, const X& x, const Y& y, const Beta& beta, const Partials& partials,
                        const Sums& sums) {
  const auto f =
      team_gradient<Lanes, Chunk, RegisterColumns, MinTeams, Rows, Staged>(space, x, y, beta, partials, sums);
  Kokkos::parallel_for("regression::fused-teams", f.policy(space), f);
  add_team_totals(space, f.partials, sums);
}

}  // namespace miniapp::regression
