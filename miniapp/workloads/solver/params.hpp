#pragma once
// N dense systems A x = b (seed 001, Example 1: np.linalg.solve / cupy.linalg.solve on random
// (systems, n, n) matrices and (systems, n, 1) right-hand sides), by LU with partial pivoting.
// What the deck, --list and the memory check know of the workload, and the one limit known
// before anything runs: the team scratch batched-team keeps a system in.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/workloads/solver/vendor_libraries.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::solver {

// Seed 001 draws A and b with np.random.rand; `diagonally-dominant` adds n to the diagonal
// (no pivoting needed, well conditioned); `singular` repeats row 0 as the last row (rank n - 1).
enum class MatrixKind { Random, DiagonallyDominant, Singular };
enum class Variant { BatchedThread, BatchedTeam, BatchedKokkosKernels, DenseBlocked, DenseVendor };

inline const char* to_string(MatrixKind k) {
  switch (k) {
    case MatrixKind::Random: return "random";
    case MatrixKind::DiagonallyDominant: return "diagonally-dominant";
    case MatrixKind::Singular: return "singular";
  }
  return "?";
}

struct Params {
  std::size_t systems = 1;
  MatrixKind matrix = MatrixKind::Random;
  int block_size = 64;  // dense-blocked: columns per panel
};

// Systems also factored by the host reference LU (to tell singular systems the kernel missed):
// as many as fit in this many n^3 operations; none for one large system, whose serial host LU
// would take longer than the solve.
inline constexpr double kReferenceLuBudget = 1e9;

inline std::size_t reference_lu_systems(std::size_t systems, std::size_t n) {
  const double n3 = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return std::min(systems, static_cast<std::size_t>(kReferenceLuBudget / n3));
}

// batched-team keeps [A | b] of one system in team scratch: level 0 (on-chip on GPUs) while it
// fits, else level 1; beyond the level-1 limit the variant refuses the size.
template <class Scalar, class Space>
using ScratchMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Columns of one system's [A | b] in the batched variants' work space: n + 1, and on host spaces
// rounded up to whole 32-byte packs (simd::Pack), which the host's elimination runs over
// (host_lu.hpp).
template <class Scalar, class Space>
constexpr std::size_t system_columns(std::size_t n) {
  constexpr std::size_t pack = is_host_space<Space>() ? 32 / sizeof(Scalar) : 1;
  return (n + 1 + pack - 1) / pack * pack;
}

// A pivot at most n * eps * max|A| counts as zero: the system is singular to working precision.
template <class Scalar>
Scalar tiny_pivot_factor(std::size_t n) {
  return static_cast<Scalar>(n) * std::numeric_limits<Scalar>::epsilon();
}

template <class Scalar, class Space>
std::size_t team_scratch_bytes(std::size_t n) {
  return ScratchMatrix<Scalar, Space>::shmem_size(n, system_columns<Scalar, Space>(n));
}

// Known once Kokkos is initialized (compat::team_scratch_size_max): asking before is a bug here.
template <class Space>
std::size_t team_scratch_limit(int level) {
  const std::optional<std::size_t> limit = compat::team_scratch_size_max<Space>(level);
  if (!limit)
    throw std::logic_error("solver: the team scratch limit of " + space_name<Space>() +
                           " was asked for before Kokkos was initialized");
  return *limit;
}

// The largest order n above `floor` whose `bytes(n)` fit `limit` (floor where none does): a
// system of order n takes at least n (n + 1) values, so the search starts at sqrt(limit / value).
template <class Scalar, class Bytes>
std::size_t largest_order_within(std::size_t limit, std::size_t floor, const Bytes& bytes) {
  std::size_t n = static_cast<std::size_t>(std::sqrt(static_cast<double>(limit) / sizeof(Scalar)));
  while (n > floor && bytes(n) > limit) --n;
  return n;
}

template <class Scalar, class Space>
std::size_t largest_team_system(int level) {
  return largest_order_within<Scalar>(team_scratch_limit<Space>(level), 0,
                                      [](std::size_t n) { return team_scratch_bytes<Scalar, Space>(n); });
}

template <class Space>
std::string team_scratch_summary() {
  if (!compat::team_scratch_size_max<Space>(0)) return space_name<Space>() + ": known once Kokkos is initialized";
  std::ostringstream s;
  s << space_name<Space>() << ": level 0 " << team_scratch_limit<Space>(0) / 1024 << " KiB (n <= "
    << largest_team_system<double, Space>(0) << "), level 1 " << team_scratch_limit<Space>(1) / (1024 * 1024)
    << " MiB (n <= " << largest_team_system<double, Space>(1) << ")";
  return s.str();
}

// Why batched-team cannot solve systems of order n on this space, if it cannot.
template <class Scalar, class Space>
std::optional<std::string> team_scratch_refusal(std::size_t n) {
  if (team_scratch_bytes<Scalar, Space>(n) <= team_scratch_limit<Space>(1)) return std::nullopt;
  std::ostringstream s;
  s << "solver: batched-team keeps one " << n << " x " << n << " system and its right-hand side in team scratch, "
    << team_scratch_bytes<Scalar, Space>(n) << " bytes, but " << space_name<Space>() << " gives a team at most "
    << team_scratch_limit<Space>(1) << " bytes (n <= " << largest_team_system<Scalar, Space>(1) << " in "
    << (sizeof(Scalar) == 4 ? "float32" : "float64") << "); use batched-thread or dense-blocked for larger systems";
  return s.str();
}

// The largest order kept in registers. The sm_90 build's float64 kernels (ptxas -v): order 8 uses
// 216 of a GPU thread's 255 registers, order 9 248, both without spills; order 10 spills 48 bytes
// to local memory, order 12 3.6 KB. On the H200 orders 8 and 10 ran four and six times faster
// here than one CUDA thread per system on a work View and on lanes (docs/results/README.md,
// "Batched solve").
inline constexpr int kRegisterOrderMax = 10;

// The largest order batched-thread's column mapping takes on a GPU (column_lu.hpp): a thread per
// column, each column in that thread's registers, rows padded to 16, two systems a warp. Above
// it, the lanes mapping: on the H200 the columns beat the lanes at order 16 and lost to them at
// 32 (one system a warp, rows padded to 32, 162 registers), so the column mapping stops at 16
// (docs/tuning-notes.md, "solver: batched-thread's column mapping on devices").
inline constexpr int kColumnOrderMax = 16;

// The order at which the lanes mapping holds each system in a fixed block of 32 rows x 33 values
// (LanesMatrix<Scalar, Space, 32>: a row stride the compiler knows, so a pass of the elimination
// spends fewer instructions on addresses) rather than n x (n + 1) scratch: faster on the H200
// at 10^3 and 10^4 systems (docs/results/README.md, the H200 of 2026-12-01). Only this order was
// timed; below it the block would hold more scratch than the system needs.
inline constexpr int kLanesBlockOrder = 32;

// How the lanes mapping runs on Space for order n: lanes per system (a power of two at least as
// many as the columns of [A | b], up to the space's vector length), systems per team (128 lanes
// in all on a GPU, fewer where their scratch would not fit on chip), and the scratch level.
struct LanesShape {
  int lanes = 1, systems_per_team = 1, level = 0;
  std::size_t bytes_per_system = 0;
};

template <class Scalar, class Space>
LanesShape lanes_shape(const std::size_t n) {
  LanesShape shape;
  shape.bytes_per_system = ScratchMatrix<Scalar, Space>::shmem_size(n, n + 1);
  const std::size_t level0 = team_scratch_limit<Space>(0);  // 32 KiB on Kokkos 5.2's OpenMP
  int all_lanes = 1;  // host teams are one thread of one lane
  if constexpr (!is_host_space<Space>()) {
    const int vector_max = Kokkos::TeamPolicy<Space>::vector_length_max();
    shape.lanes = n + 1 <= 16 ? 16 : 32;
    if (shape.lanes > vector_max) shape.lanes = vector_max;
    all_lanes = 128;
  }
  shape.systems_per_team = all_lanes / shape.lanes;
  while (shape.systems_per_team > 1 && shape.systems_per_team * shape.bytes_per_system > level0)
    shape.systems_per_team /= 2;
  if (shape.bytes_per_system > level0) {
    shape.level = 1;
    shape.systems_per_team = all_lanes / shape.lanes;
  }
  return shape;
}

// The scratch one team of the lanes mapping asks for: its systems' [A | b], one per thread.
template <class Scalar, class Space>
std::size_t lanes_team_bytes(std::size_t n) {
  const LanesShape shape = lanes_shape<Scalar, Space>(n);
  return shape.bytes_per_system * static_cast<std::size_t>(shape.systems_per_team);
}

// The largest order the lanes mapping holds in a team's level-1 scratch.
template <class Scalar, class Space>
std::size_t largest_lanes_system() {
  return largest_order_within<Scalar>(team_scratch_limit<Space>(1), kRegisterOrderMax,
                                      [](std::size_t n) { return lanes_team_bytes<Scalar, Space>(n); });
}

// Why batched-thread cannot solve systems of order n on this space, if it cannot. Host spaces
// keep each system in a work slice of the space's memory; a device above kRegisterOrderMax keeps
// it in one thread's scratch, which Kokkos bounds per team (level 1: 20 MiB on CUDA, Kokkos 4.6).
template <class Scalar, class Space>
std::optional<std::string> thread_scratch_refusal(std::size_t n) {
  if (is_host_space<Space>() || n <= static_cast<std::size_t>(kRegisterOrderMax) ||
      lanes_team_bytes<Scalar, Space>(n) <= team_scratch_limit<Space>(1))
    return std::nullopt;
  const LanesShape shape = lanes_shape<Scalar, Space>(n);
  std::ostringstream s;
  s << "solver: batched-thread on " << space_name<Space>() << " keeps one " << n << " x " << n
    << " system and its right-hand side in one thread's scratch, " << shape.bytes_per_system << " bytes, "
    << shape.systems_per_team << " threads to a team, but " << space_name<Space>() << " gives a team at most "
    << team_scratch_limit<Space>(1) << " bytes (n <= " << largest_lanes_system<Scalar, Space>() << " in "
    << (sizeof(Scalar) == 4 ? "float32" : "float64") << "); use dense-blocked for larger systems";
  return s.str();
}

struct Description {
  static constexpr const char* name = "solver";
  static constexpr const char* summary = "N dense systems A x = b by LU with partial pivoting (seed 001, Example 1)";
  static constexpr const char* size_meaning = "order n of each system (A is n x n; key `systems` sets how many)";
  static constexpr const char* ranks_split =
      "batched variants: each rank its share of the systems; dense-blocked and dense-vendor are one system on one "
      "rank only; nothing is exchanged";
  using Params = solver::Params;

  static VariantTable<Variant> variant_table() {
    std::string limits;
    for_each_space([&](auto tag) {
      limits += (limits.empty() ? "" : "; ") + team_scratch_summary<typename decltype(tag)::type>();
    });
    return {
        {Variant::BatchedThread, "batched-thread",
         "one thread per system, LU with partial pivoting: on host spaces each thread solves a run of consecutive "
         "systems on its own slice of a work View ([A | b] as batched-team holds it in scratch); on GPUs a system of "
         "order <= 10 is one GPU thread's registers, one of order <= 16 half a warp's threads, each holding one "
         "column in its registers (rows padded to 16), a larger one the vector lanes of one Kokkos thread (32 lanes "
         "over the columns of [A | b] in that thread's scratch)"},
        {Variant::BatchedTeam, "batched-team",
         "one team per system, [A | b] in team scratch, pivot search as a team MaxLoc reduction; scratch per team "
         "(float64): " + limits},
        {Variant::BatchedKokkosKernels, "batched-kokkos-kernels",
         "one thread per system, Kokkos Kernels' batched LU with partial pivoting (KokkosBatched::SerialGetrf and "
         "SerialGetrs; on Kokkos Kernels 4.5 the same elimination from its SerialIamax, SerialGemm, SerialLaswp and "
         "SerialTrsv) on its own slice of a work View",
         compat::kHasBatchedPivotingSolve ? "" : compat::kBatchedPivotingSolveRequirement},
        {Variant::DenseBlocked, "dense-blocked",
         "right-looking blocked LU with partial pivoting, trailing update by KokkosBlas::gemm, then the two "
         "triangular solves; systems solved one after another",
         compat::unavailable_without_kokkos_kernels()},
        {Variant::DenseVendor, "dense-vendor",
         "the vendor's LU with partial pivoting (LAPACK getrf/getrs on host spaces, cuSOLVER on CUDA, rocSOLVER on "
         "HIP) after a transposing copy into its column-major order, as NumPy's solve does; systems solved one after "
         "another: the reference dense-blocked is measured against",
         vendor::unavailable_reason()},
    };
  }
  static Variant variant(const std::string& name) { return variant_id(variant_table(), name, "solver"); }
  static std::vector<VariantInfo> variants() { return variant_infos(variant_table()); }

  // A, b, x and info; each variant's work space; on the host, verification's double copy of one
  // system for the reference LU.
  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t n = spec.size, s = scalar_bytes(spec.precision);
    // Under MPI, the systems of the rank that holds the most.
    Params mine = p;
    mine.systems = ranks::Slice::largest_part(p.systems, spec.ranks);
    bool host = true;  // a space not compiled in: the host's upper bound
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (space_name<Space>() == spec.space) host = is_host_space<Space>();
    });
    return footprint_of(mine, n, s, spec.variant, host);
  }

  static Footprint footprint_of(const Params& p, std::size_t n, std::size_t s, const std::string& variant,
                                bool host_space = true) {
    const std::size_t inputs_outputs = p.systems * ((n * n + 2 * n) * s + sizeof(int));
    const VariantTable<Variant> table = variant_table();
    std::size_t work = 0;
    // batched-thread on a host space: at most two slices per thread, bounded here by one per
    // system (kernels.hpp, thread_work_slices); on a device none (registers or scratch).
    if (is_variant(table, variant, Variant::BatchedThread) && host_space) work = p.systems * (n * n + n) * s;
    if (is_variant(table, variant, Variant::BatchedKokkosKernels)) work = p.systems * (n * n * s + n * sizeof(int));
    if (is_variant(table, variant, Variant::DenseBlocked))
      work = (n * n + n + 16 * n + 1) * s + n * sizeof(int);  // one system at a time: LU, rhs, leaf, pivots
    if (is_variant(table, variant, Variant::DenseVendor))
      work = (n * n + 1) * s + (n + 2) * sizeof(int);  // one system at a time: LU, pivots (and the library's workspace)
    const std::size_t reference = reference_lu_systems(p.systems, n) > 0 ? (n * n + n) * sizeof(double) : 0;
    return {inputs_outputs + work, reference};
  }

  // The dense variants under MPI, and the batched variants' scratch limits: known before anything
  // is allocated.
  static std::optional<std::string> refuse(const Params&, const MeasurementSpec& spec) {
    const VariantTable<Variant> table = variant_table();
    if (spec.ranks > 1 &&
        (is_variant(table, spec.variant, Variant::DenseBlocked) || is_variant(table, spec.variant, Variant::DenseVendor)))
      return spec.variant + " solves one system at a time on one rank and is not split across MPI ranks (the batched "
                            "variants are: systems split across ranks); run it with one rank";
    const bool team = is_variant(table, spec.variant, Variant::BatchedTeam);
    if (!team && !is_variant(table, spec.variant, Variant::BatchedThread)) return std::nullopt;
    const bool single = spec.precision == Precision::Float32;
    std::optional<std::string> why;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (space_name<Space>() != spec.space) return;
      if (team)
        why = single ? team_scratch_refusal<float, Space>(spec.size) : team_scratch_refusal<double, Space>(spec.size);
      else
        why = single ? thread_scratch_refusal<float, Space>(spec.size) : thread_scratch_refusal<double, Space>(spec.size);
    });
    return why;
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    return {{"systems", std::to_string(p.systems)},
            {"matrix", to_string(p.matrix)},
            {"block_size", std::to_string(p.block_size)}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto s = r.integer("systems", 1, 1000000000)) p.systems = static_cast<std::size_t>(*s);
    if (auto m = r.choice("matrix", {"random", "diagonally-dominant", "singular"}))
      p.matrix = *m == "random" ? MatrixKind::Random
                 : *m == "singular" ? MatrixKind::Singular
                                    : MatrixKind::DiagonallyDominant;
    if (auto b = r.integer("block_size", 1, 4096)) p.block_size = static_cast<int>(*b);
    return p;
  }
};

}  // namespace miniapp::solver
