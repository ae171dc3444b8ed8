#pragma once
// Euclidean distance matrix of N random points in D dimensions (seed 002, ETH Zurich):
// D(i, j) = || p_i - p_j ||, or its square; or, without the N x N matrix, per-row reductions
// (nearest other point, sum of distances). What the deck, --list and the memory check know of
// the workload, and how a matrix too large for the space is cut into row blocks.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/memory.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::distance {

enum class Output { Matrix, RowMin, RowSum };
enum class Variant { Direct, Symmetric, Gemm, Tiled };

inline const char* to_string(Output o) {
  return o == Output::Matrix ? "matrix" : o == Output::RowMin ? "row-min" : "row-sum";
}

struct Params {
  int dim = 3;
  bool squared = false;
  Output output = Output::Matrix;
  // Bytes the space may hold for one measurement; unset: what the device has free (host spaces:
  // no limit, the output lives in host memory anyway).
  std::optional<std::size_t> memory_budget;
  // Rows per block of a chunked run; set, it chunks whatever the budget.
  std::optional<std::size_t> chunk_rows;
};

// "512MiB", "2GB", "1e9" or a plain number of bytes.
inline std::optional<std::size_t> parse_bytes(const std::string& text) {
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit = text.substr(pos);
  unit.erase(std::remove_if(unit.begin(), unit.end(), [](unsigned char c) { return std::isspace(c); }), unit.end());
  static const std::pair<const char*, double> units[] = {
      {"", 1.0},     {"B", 1.0},    {"KB", 1e3},           {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12},  {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  for (const auto& [name, factor] : units)
    if (unit == name && value > 0 && value * factor < 1.8e19) return static_cast<std::size_t>(value * factor);
  return std::nullopt;
}

// How a matrix output is laid out in memory: whole in the space, or in row blocks streamed to
// the host when the matrix exceeds the budget.
struct BlockPlan {
  bool chunked = false;
  std::size_t rows_per_block = 0;
  std::size_t blocks = 1;
  std::optional<std::size_t> budget;
};

// Two block buffers (double buffering where copies overlap compute).
inline constexpr std::size_t kBlockBuffers = 2;

// The blocks of `rows` rows of the n x n matrix (all n, or one MPI rank's rows; 0: n).
inline BlockPlan plan_blocks(const Params& p, std::size_t n, std::size_t scalar_bytes,
                             std::optional<std::size_t> budget, std::size_t rows = 0) {
  if (rows == 0) rows = n;
  BlockPlan plan;
  plan.budget = budget;
  plan.rows_per_block = rows;
  if (p.output != Output::Matrix || n == 0) return plan;
  const std::size_t row_bytes = n * scalar_bytes;
  // Points twice (as given and coordinate-major), norms.
  const std::size_t fixed = 2 * n * static_cast<std::size_t>(p.dim) * scalar_bytes + row_bytes;
  if (p.chunk_rows) {
    plan.rows_per_block = std::min(*p.chunk_rows, rows);
  } else if (budget && fixed + rows * row_bytes > *budget) {
    const std::size_t room = *budget > fixed ? *budget - fixed : 0;
    plan.rows_per_block = std::clamp<std::size_t>(room / (kBlockBuffers * row_bytes), 1, rows);
  }
  plan.chunked = plan.rows_per_block < rows;
  plan.blocks = (rows + plan.rows_per_block - 1) / plan.rows_per_block;
  return plan;
}

// The budget in effect for a space: the deck's, else 90% of the device's free memory (the rest
// for Kokkos and Kokkos Kernels' own allocations).
inline std::optional<std::size_t> budget_for(const Params& p, const std::string& space, bool host_space) {
  if (p.memory_budget) return p.memory_budget;
  if (host_space) return std::nullopt;
  if (const auto free_bytes = available_device_memory(space)) return *free_bytes / 10 * 9;
  return std::nullopt;
}

// The spaces where chunked copies overlap compute in this build, for --list and the results.
inline std::string overlap_spaces() {
  std::string names;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (compat::ConcurrentInstances<Space>::concurrent()) names += (names.empty() ? "" : ", ") + space_name<Space>();
  });
  return names.empty() ? "no compiled space (host spaces have nothing to overlap)" : names;
}

struct Description {
  static constexpr const char* name = "distance";
  static constexpr const char* summary = "Euclidean distance matrix of N random points (seed 002)";
  static constexpr const char* size_meaning = "number of points N (output N x N, or N per-row values)";
  static constexpr const char* ranks_split =
      "each rank holds every point and computes its own rows of the output (the symmetric variant then each of "
      "its entries); nothing is exchanged";
  using Params = distance::Params;

  static VariantTable<Variant> variant_table() {
    const std::string chunked = "; chunked output overlaps copies with compute on " + overlap_spaces();
    return {{Variant::Direct, "direct",
             "host spaces: an entry per vector lane, a row per thread (TeamPolicy, j contiguous); GPUs: a thread per "
             "4 rows x 8 columns" +
                 chunked},
            {Variant::Symmetric, "symmetric",
             "each pair once, both entries written (tile pairs of the triangle: 32 x 32 on host spaces, 64 x 64 on "
             "GPUs)"},
            {Variant::Gemm, "gemm",
             "x2 + y2 - 2 x.y with KokkosBlas::gemm, clamped at zero (CuPy's form; loses accuracy for near-identical "
             "points)",
             compat::unavailable_without_kokkos_kernels()},
            {Variant::Tiled, "tiled",
             "teams of 16 rows (on GPUs x 256 columns), column points staged in scratch memory" + chunked}};
  }
  static Variant variant(const std::string& name) { return variant_id(variant_table(), name, "distance"); }
  static std::vector<VariantInfo> variants() { return variant_infos(variant_table()); }

  // Every output is split across MPI ranks by rows (each rank holds every point and its own rows
  // of the outputs), which needs a row per rank at least.
  static std::optional<std::string> refuse(const Params&, const MeasurementSpec& spec) {
    if (spec.ranks > 1 && spec.size < static_cast<std::size_t>(spec.ranks))
      return "the " + std::to_string(spec.size) + " rows are split across " + std::to_string(spec.ranks) +
             " MPI ranks: fewer rows than ranks";
    return std::nullopt;
  }

  // Rows of the rank that holds the most.
  static std::size_t own_rows(const MeasurementSpec& spec) { return ranks::Slice::largest_part(spec.size, spec.ranks); }

  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t s = scalar_bytes(spec.precision);
    const std::size_t n = spec.size;
    const std::size_t points = 2 * n * static_cast<std::size_t>(p.dim) * s;  // as given, coordinate-major
    switch (p.output) {
      case Output::RowMin: return {points + own_rows(spec) * (s + sizeof(std::int64_t)), 0};
      case Output::RowSum: return {points + own_rows(spec) * s, 0};
      default: break;
    }
    // Under MPI, the rows of the rank that holds the most.
    const std::size_t rows = own_rows(spec);
    const BlockPlan plan = plan_blocks(p, n, s, budget_for(p, spec.space, is_host_space_name(spec.space)), rows);
    const std::size_t norms = is_variant(variant_table(), spec.variant, Variant::Gemm) ? n * s : 0;
    if (!plan.chunked) return {points + norms + rows * n * s, 0};
    return {points + norms + kBlockBuffers * plan.rows_per_block * n * s, rows * n * s};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    return {{"dim", std::to_string(p.dim)},
            {"squared", p.squared ? "true" : "false"},
            {"output", to_string(p.output)},
            {"memory_budget", p.memory_budget ? std::to_string(*p.memory_budget) : "free device memory"},
            {"chunk_rows", p.chunk_rows ? std::to_string(*p.chunk_rows) : "from memory_budget"}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto dim = r.integer("dim", 1, 1024)) p.dim = static_cast<int>(*dim);
    if (auto sq = r.boolean("squared")) p.squared = *sq;
    if (auto out = r.choice("output", {"matrix", "row-min", "row-sum"}))
      p.output = *out == "row-min" ? Output::RowMin : *out == "row-sum" ? Output::RowSum : Output::Matrix;
    if (const YAML::Node budget = r.node("memory_budget"); budget.IsDefined()) {
      const std::optional<std::size_t> bytes = budget.IsScalar() ? parse_bytes(budget.Scalar()) : std::nullopt;
      if (bytes) p.memory_budget = bytes;
      else
        r.diagnostics().error(budget, r.key_path("memory_budget"),
                              "found " + describe_node(budget) +
                                  ", expected a positive number of bytes, optionally with a unit (B, KB, MB, GB, "
                                  "KiB, MiB, GiB), e.g. 512MiB");
    }
    if (auto rows = r.integer("chunk_rows", 1, std::numeric_limits<std::int32_t>::max()))
      p.chunk_rows = static_cast<std::size_t>(*rows);
    return p;
  }
};

}  // namespace miniapp::distance
