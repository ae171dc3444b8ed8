#pragma once
// Linear regression by full-batch gradient descent (seed 001, Example 2, JAX's fit_model):
// beta <- beta - lr * (2/N) X^T (X beta - y), from beta = 0, for a fixed number of steps; the
// loss is the mean squared error. X = [data, 1] (an intercept column).
//   features = 0: the single-variable model y = 2x + 5 + noise N(0,1), x in [0, 1) sorted;
//   features = P: X = [U(0,1)^(N x P), 1], integer beta in 1..9, y = X beta + noise N(0,1).
// What the deck, --list and the memory check know of the workload.

#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/core/workload.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::regression {

enum class Variant { Blas, Fused };

struct Params {
  int features = 0;  // 0: the single-variable model of the seed
  std::int64_t iterations = 10000;
  std::optional<double> learning_rate;  // default: the seed's, 0.1 (single) or 0.001 (multivariate)
  std::optional<double> noise;          // default: the seed's, 0.1 (single) or 1 (multivariate)

  bool single_variable() const { return features == 0; }
  std::size_t columns() const { return single_variable() ? 2 : static_cast<std::size_t>(features) + 1; }
  double rate() const { return learning_rate.value_or(single_variable() ? 0.1 : 0.001); }
  double noise_scale() const { return noise.value_or(single_variable() ? 0.1 : 1.0); }
};

struct Description {
  static constexpr const char* name = "regression";
  static constexpr const char* summary = "linear regression by full-batch gradient descent (seed 001, Example 2)";
  static constexpr const char* size_meaning = "number of samples N (X is N x (features + 1))";
  static constexpr const char* ranks_split =
      "each rank its rows of X and y; every step the ranks' gradient sums and loss are added (one allreduce of "
      "features + 3 values, the `communicate` phase), and the fused variant runs its steps as launches";
  using Params = regression::Params;

  static VariantTable<Variant> variant_table() {
    return {{Variant::Blas, "blas", "per step r = X beta - y and g = (2/N) X^T r by KokkosBlas::gemv, then the update",
             compat::unavailable_without_kokkos_kernels()},
            {Variant::Fused, "fused", "per step one pass over X: the gradient and the loss as one reduction; on host spaces of several threads "
             "all steps in one parallel region, the threads meeting once per step; on GPUs one launch a step, a row "
             "a thread of 4 vector lanes holding its columns of the row, of beta and of the sums in registers (rows "
             "of 1 to 3 columns: a thread a row on one lane; over 64: 4 (float32) or 8 (float64) lanes, the sums in "
             "team scratch)"}};
  }
  static Variant variant(const std::string& name) { return variant_id(variant_table(), name, "regression"); }
  static std::vector<VariantInfo> variants() { return variant_infos(variant_table()); }

  // X, y, the residual of `blas`, the loss history, beta and the sums; on the host, verification's
  // float64 Gram matrix (twice: the replay's and the closed form's LU) and vectors of cols. Under
  // MPI, the rows of the rank that holds the most.
  static Footprint footprint(const Params& p, const MeasurementSpec& spec) {
    const std::size_t n = ranks::Slice::largest_part(spec.size, spec.ranks), cols = p.columns();
    const std::size_t s = scalar_bytes(spec.precision);
    const std::size_t residual = is_variant(variant_table(), spec.variant, Variant::Fused) ? 0 : n;
    const std::size_t space = (n * cols + n + residual + static_cast<std::size_t>(p.iterations) + 2 * cols + 3) * s;
    return {space, (3 * cols * cols + 16 * cols) * sizeof(double)};
  }

  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    auto number = [](double v) {
      std::ostringstream s;
      s << v;
      return s.str();
    };
    return {{"features", std::to_string(p.features)},
            {"model", p.single_variable() ? "y = 2x + 5 + noise N(0,1), x sorted in [0,1)"
                                          : "y = X beta + noise N(0,1), integer beta in 1..9"},
            {"iterations", std::to_string(p.iterations)},
            {"learning_rate", number(p.rate())},
            {"noise", number(p.noise_scale())}};
  }

  static Params parse(MapReader& r) {
    Params p;
    if (auto f = r.integer("features", 0, 4096)) p.features = static_cast<int>(*f);
    if (auto it = r.integer("iterations", 1, 100000000)) p.iterations = *it;
    if (auto lr = r.real("learning_rate", 0.0)) p.learning_rate = *lr;
    if (r.has("noise")) {
      const YAML::Node n = r.node("noise");
      const std::optional<double> v = as_real(n);
      if (!v || !(*v >= 0) || !std::isfinite(*v))
        r.diagnostics().error(n, r.key_path("noise"),
                              "found " + describe_node(n) + ", expected a number greater than or equal to 0");
      else
        p.noise = *v;
    }
    return p;
  }
};

}  // namespace miniapp::regression
