#pragma once
// TeamGradient's staged register form (team_gradient.hpp, Staged): the register form with the
// team's rows copied a tile at a time (a row a thread) into the team's scratch by all its lanes at
// once, 16 bytes a load where the addresses allow, each thread then reading its row from there.
// A tile of X's rows is one contiguous stretch of memory whatever the row's length; a row of 51
// values is 204 bytes in float32, not 16-byte aligned, so the register form's lanes load 4 bytes
// each, and a row's loads, its dot product, its lanes' reduction and its update come one after
// the other, a row in flight a thread. Here a tile's loads are all in flight at once, and a row's
// chain waits on scratch, not on memory. Not the workload's form until measured: benchmarks
// regression-sums-registers-lanes4-staged and -lanes8-staged (docs/tuning-notes.md).

#include "miniapp/core/pack16.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace miniapp::regression {

// n values from `from` (in Space's memory) to `to` (the team's scratch) by all the team's lanes:
// the values before `from`'s first 16-byte boundary one a lane, then a Pack16 a lane, then the
// rest one a lane. Host spaces copy each pack with memcpy, devices load it as one.
template <class Space, class Member, class Scalar>
KOKKOS_INLINE_FUNCTION void stage_values(const Member& team, const Scalar* from, const int n, Scalar* to) {
  constexpr int kPack = Pack16<Scalar>::kValues;
  const auto offset = static_cast<int>(reinterpret_cast<std::uintptr_t>(from) % 16 / sizeof(Scalar));
  const int head_end = offset == 0 ? 0 : (kPack - offset < n ? kPack - offset : n);
  const int packs = (n - head_end) / kPack, tail = head_end + packs * kPack;
  Kokkos::parallel_for(Kokkos::TeamVectorRange(team, head_end + packs + (n - tail)), [&](const int e) {
    if (e < head_end) {
      to[e] = from[e];
    } else if (e < head_end + packs) {
      const int first = head_end + (e - head_end) * kPack;
      const Pack16<Scalar> p = load_pack<Space>(from + first);
      MINIAPP_UNROLL
      for (int k = 0; k < kPack; ++k) to[first + k] = p.v[k];
    } else {
      const int k = tail + (e - head_end - packs);
      to[k] = from[k];
    }
  });
}

// The staged form's pass for f, a TeamGradient: a tile is a row for each of the team's threads,
// the rows thread t takes in the register form (first + t, then a team's size of rows on), so its
// sums add the same rows in the same order (the same sums to rounding). The tile takes the scratch
// of the threads' sums (`part`, a row of cols + 1 values each), which they are written to only
// after the last tile has been read. A row is read from scratch twice, for the dot product and
// for the update, rather than held in registers between them as the register form holds it
// (held, float64 on 4 lanes took 157 registers: one team a multiprocessor).
template <class F, class Member, class Scratch>
KOKKOS_INLINE_FUNCTION void staged_register_sums(const F& f, const Member& team, const Scratch& part) {
  using Scalar = typename Scratch::value_type;
  constexpr int kPerLane = F::kPerLane, kLanes = F::kLanes;
  const int cols = static_cast<int>(f.value_count) - 1, t = team.team_rank(), threads = team.team_size();
  Scalar b[kPerLane], g[kPerLane];
  Scalar loss = 0;
  f.hold_beta(team, b, g);
  const auto rows = f.block(team);
  Scalar* const tile = part.data();
  for (std::int64_t r0 = rows.first; r0 < rows.second; r0 += threads) {
    const std::int64_t r1 = r0 + threads < rows.second ? r0 + threads : rows.second;
    team.team_barrier();  // the previous tile's rows read
    stage_values<typename F::ExecutionSpace>(team, f.x.data() + r0 * cols, static_cast<int>(r1 - r0) * cols, tile);
    team.team_barrier();
    const std::int64_t i = r0 + t;
    if (i >= r1) continue;  // the block's last tile: fewer rows than threads
    const Scalar* const row = tile + static_cast<std::int64_t>(t) * cols;
    Scalar dot = 0;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, kLanes),
        [&](const int lane, Scalar& d) {
          MINIAPP_UNROLL
          for (int c = 0; c < kPerLane; ++c) {
            const int j = lane + c * kLanes;
            d += (j < cols ? row[j] : Scalar(0)) * b[c];
          }
        },
        dot);
    const Scalar r = dot - f.y(i);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, kLanes), [&](const int lane) {
      MINIAPP_UNROLL
      for (int c = 0; c < kPerLane; ++c) {
        const int j = lane + c * kLanes;
        g[c] += (j < cols ? row[j] : Scalar(0)) * r;
      }
    });
    loss += r * r;  // the same in every lane of the thread
  }
  team.team_barrier();  // the last tile read before the sums take its scratch
  f.held_sums_to_scratch(team, part, g, loss);
}

}  // namespace miniapp::regression
