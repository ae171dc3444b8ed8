// The workload contract (miniapp/core/workload.hpp) on the smallest workload there can be, and
// the checks that reject what does not meet it.

#include "miniapp/core/field.hpp"
#include "miniapp/core/verification.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/core/workload_instance.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace miniapp;

// A named namespace: nvcc warns about the unused static members of classes in an unnamed one.
namespace contract_examples {

// y = 2 x over `size` values.
struct Doubling {
  enum class Variant { Plain };
  struct Params {
    double factor = 2;
  };
  static constexpr const char* name = "doubling";
  static constexpr const char* summary = "y = 2 x";
  static constexpr const char* size_meaning = "values";
  static VariantTable<Variant> variant_table() { return {{Variant::Plain, "plain", "one RangePolicy"}}; }
  static std::vector<VariantInfo> variants() { return variant_infos(variant_table()); }
  static Params parse(MapReader&) { return {}; }
  static std::vector<std::pair<std::string, std::string>> describe(const Params& p) {
    return {{"factor", std::to_string(p.factor)}};
  }
  static Footprint footprint(const Params&, const MeasurementSpec& spec) {
    return {2 * spec.size * scalar_bytes(spec.precision), 0};
  }

  template <class Scalar, class Space>
  class Kernel {
   public:
    Kernel(const Params& p, const std::string&, std::size_t size) : factor_(p.factor), x_("x", size), y_("y", size) {}
    std::vector<Transferable*> inputs() { return {&x_}; }
    std::vector<Transferable*> outputs() { return {&y_}; }
    void generate_inputs(std::uint64_t) {
      for (std::size_t i = 0; i < x_.host.extent(0); ++i) x_.host(i) = static_cast<Scalar>(i);
    }
    void compute(const Space& space) {
      const auto x = x_.device;
      const auto y = y_.device;
      const auto factor = static_cast<Scalar>(factor_);
      Kokkos::parallel_for(
          "doubling", Kokkos::RangePolicy<Space>(space, 0, x.extent(0)), KOKKOS_LAMBDA(const int i) { y(i) = factor * x(i); });
    }
    WorkEstimate work() const { return {static_cast<double>(x_.host.extent(0)), 0, 0}; }
    Verification verify(std::optional<double> tolerance) const {
      ErrorTally tally(tolerance.value_or(0));
      for (std::size_t i = 0; i < y_.host.extent(0); ++i)
        tally.compare(y_.host(i), factor_ * x_.host(i), 1, [&] { return "y(" + std::to_string(i) + ")"; });
      return tally.result("host multiplication", "every value");
    }

   private:
    double factor_;
    Field<Scalar*, Space> x_, y_;
  };
};

struct NoParams {
  static constexpr const char* name = "x";
  static constexpr const char* summary = "x";
  static constexpr const char* size_meaning = "x";
};

struct Unconstructible : Doubling {
  template <class Scalar, class Space>
  struct Kernel {};
};

}  // namespace contract_examples

using namespace contract_examples;

TEST(WorkloadContract, TheSmallestWorkloadMeetsItAndRuns) {
  static_assert(contract::check<Doubling>());
  using Host = Kokkos::DefaultHostExecutionSpace;
  MeasurementSpec spec;
  spec.workload = "doubling";
  spec.variant = "plain";
  spec.size = 100;
  spec.space = space_name<Host>();
  spec.policy = MirrorPolicy::Host;
  spec.precision = Precision::Float64;
  const Measurement m = Instances<Doubling, Host>::run(spec, Doubling::Params{});
  EXPECT_TRUE(m.verification.passed) << m.verification.detail;
  EXPECT_EQ(m.seconds.compute.size(), static_cast<std::size_t>(spec.repetitions));
  const bool on_device = Instances<Doubling, Host>::generates_on_device();
  EXPECT_FALSE(on_device);
  EXPECT_EQ(variant_id(Doubling::variant_table(), "plain", "doubling"), Doubling::Variant::Plain);
  EXPECT_THROW(variant_id(Doubling::variant_table(), "fancy", "doubling"), std::invalid_argument);
  EXPECT_FALSE(is_variant(Doubling::variant_table(), "fancy", Doubling::Variant::Plain));
}

TEST(WorkloadContract, WhatDoesNotMeetItIsNamed) {
  static_assert(contract::has_names<NoParams>::value);
  static_assert(!contract::has_params<NoParams>::value, "no Params");
  static_assert(!contract::has_variants<NoParams>::value, "no variants()");
  static_assert(!contract::has_refuse<Doubling>::value, "refuse() is optional");
  static_assert(!contract::has_kernel_members<Unconstructible::Kernel<double, Kokkos::DefaultHostExecutionSpace>,
                                              Kokkos::DefaultHostExecutionSpace>::value,
                "a kernel without its members");
  SUCCEED();
}
