#pragma once
// Seed 000 (NREL): the elementwise `z = x ** y` of its numba copy experiment over arrays of
// shape (rows, size), and the BLAS3 product it names as the model GPU workload,
// C = alpha*A*B + beta*C0. What the deck, --list and the memory check know of the workload.

#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/workload.hpp"

#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::matrix {

enum class Variant { Elementwise, GemmNaive, GemmTiled, GemmKokkosKernels };
enum class Operation { Power, Multiply };

// gemm-tiled: tile sizes in the deck are multiples of this, so any register block divides them.
inline constexpr int kTileMultiple = 32;

struct Params {
  Operation op = Operation::Power;
  int rows = 3;  // elementwise: the seed's arrays are (3, 1e9)
  // gemm: each unset extent is the case's size.
  std::optional<std::size_t> m, n, k;
  double alpha = 1.0;
  double beta = 0.0;
  // gemm-tiled: 0 takes the space's default (default_tiles()).
  int tile_m = 0, tile_n = 0, tile_k = 0;
};

// gemm-tiled: rows and columns of C per team, and the depth of each k slice.
struct TileShape {
  int m = 0, n = 0, k = 0;
};

// "TM x TN x TK", as results and errors name a tile.
inline std::string to_string(const TileShape& t) {
  return std::to_string(t.m) + " x " + std::to_string(t.n) + " x " + std::to_string(t.k);
}

struct GemmShape {
  std::size_t m = 0, n = 0, k = 0;
};

inline GemmShape gemm_shape(const Params& p, std::size_t size) {
  return {p.m.value_or(size), p.n.value_or(size), p.k.value_or(size)};
}

struct Description {
  static constexpr const char* name = "matrix";
  static constexpr const char* summary = "elementwise z = x ** y or x * y (seed 000) and GEMM C = alpha*A*B + beta*C0";
  static constexpr const char* size_meaning =
      "elementwise: columns of the rows x size arrays; gemm: M = N = K unless the keys m, n, k set them";
  static constexpr const char* ranks_split =
      "elementwise: each rank its share of the rows x size elements; gemm: each rank its rows of A, C0 and C, and "
      "the whole of B; nothing is exchanged";
  using Params = matrix::Params;

  static VariantTable<Variant> variant_table() {
    return {{Variant::Elementwise, "elementwise", "z = x ** y (op: power) or x * y (op: multiply): host spaces one flat loop (pow in SIMD registers where the "
             "build has them); GPUs 4 elements a thread, a quarter of the array apart (neighbouring threads, "
             "neighbouring elements)"},
            {Variant::GemmNaive, "gemm-naive", "one thread per element of C (MDRangePolicy)"},
            {Variant::GemmTiled, "gemm-tiled",
             "teams over tiles of C, A/B slices packed in scratch, register-blocked micro-kernel (GPUs: each "
             "thread keeps its block of C in registers over all of K)"},
            {Variant::GemmKokkosKernels, "gemm-kokkos-kernels",
             "KokkosBlas::gemm (the vendor BLAS where Kokkos Kernels was built with it)",
             compat::unavailable_without_kokkos_kernels()}};
  }
  static Variant variant(const std::string& name) { return variant_id(variant_table(), name, "matrix"); }
  static std::vector<VariantInfo> variants() { return variant_infos(variant_table()); }

  // Elementwise and GEMM lay out different arrays for the same size; verification adds two rows
  // of N doubles on the host.
  // GEMM splits across MPI ranks by rows of A and C, which needs a row per rank at least.
  static std::optional<std::string> refuse(const Params& p, const MeasurementSpec& spec) {
    if (spec.ranks > 1 && !is_variant(variant_table(), spec.variant, Variant::Elementwise) &&
        gemm_shape(p, spec.size).m < static_cast<std::size_t>(spec.ranks))
      return spec.variant + " splits the " + std::to_string(gemm_shape(p, spec.size).m) + " rows of C across " +
             std::to_string(spec.ranks) + " MPI ranks: fewer rows than ranks";
    return std::nullopt;
  }

  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t s = scalar_bytes(spec.precision);
    if (is_variant(variant_table(), spec.variant, Variant::Elementwise)) {
      // Under MPI, the part of the rank that holds the most.
      return {3 * ranks::Slice::largest_part(static_cast<std::size_t>(p.rows) * spec.size, spec.ranks) * s, 0};
    }
    // Under MPI, the panel of the rank that holds the most rows, and the whole of B.
    GemmShape g = gemm_shape(p, spec.size);
    g.m = ranks::Slice::largest_part(g.m, spec.ranks);
    return {(g.m * g.k + g.k * g.n + (p.beta != 0.0 ? 2 : 1) * g.m * g.n) * s, 2 * g.n * sizeof(double)};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    auto extent = [](const std::optional<std::size_t>& e) { return e ? std::to_string(*e) : std::string("size"); };
    auto tile = [](int t) { return t > 0 ? std::to_string(t) : std::string("space default"); };
    std::ostringstream alpha, beta;
    alpha << p.alpha;
    beta << p.beta;
    return {{"op", p.op == Operation::Power ? "power" : "multiply"},
            {"rows", std::to_string(p.rows)},
            {"m", extent(p.m)},
            {"n", extent(p.n)},
            {"k", extent(p.k)},
            {"alpha", alpha.str()},
            {"beta", beta.str()},
            {"tile_m", tile(p.tile_m)},
            {"tile_n", tile(p.tile_n)},
            {"tile_k", tile(p.tile_k)}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto op = r.choice("op", {"power", "multiply"})) p.op = *op == "power" ? Operation::Power : Operation::Multiply;
    if (auto rows = r.integer("rows", 1, 1 << 20)) p.rows = static_cast<int>(*rows);
    const std::int64_t max_extent = std::int64_t(1) << 30;
    if (auto m = r.integer("m", 1, max_extent)) p.m = static_cast<std::size_t>(*m);
    if (auto n = r.integer("n", 1, max_extent)) p.n = static_cast<std::size_t>(*n);
    if (auto k = r.integer("k", 1, max_extent)) p.k = static_cast<std::size_t>(*k);
    // alpha and beta may be negative or zero, which MapReader::real (a lower bound) cannot say.
    auto finite = [&r](const std::string& key) -> std::optional<double> {
      const YAML::Node n = r.node(key);
      if (!n.IsDefined()) return std::nullopt;
      const std::optional<double> v = as_real(n);
      if (!v || !std::isfinite(*v)) {
        r.diagnostics().error(n, r.key_path(key), "found " + describe_node(n) + ", expected a finite number");
        return std::nullopt;
      }
      return v;
    };
    if (auto alpha = finite("alpha")) p.alpha = *alpha;
    if (auto beta = finite("beta")) p.beta = *beta;
    for (auto [key, target] : {std::pair{"tile_m", &p.tile_m}, std::pair{"tile_n", &p.tile_n}}) {
      if (auto t = r.integer(key, kTileMultiple, 1024)) {
        if (*t % kTileMultiple != 0)
          r.diagnostics().error(r.node(key), r.key_path(key),
                                "found " + std::to_string(*t) + ", expected a multiple of " +
                                    std::to_string(kTileMultiple) + " (the register blocks divide the tile)");
        else
          *target = static_cast<int>(*t);
      }
    }
    if (auto t = r.integer("tile_k", 1, 4096)) p.tile_k = static_cast<int>(*t);
    return p;
  }
};

}  // namespace miniapp::matrix
