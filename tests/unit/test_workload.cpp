// The workload contract (miniapp/core/workload.hpp) on the smallest workload there can be, and
// the checks that reject what does not meet it.

#include "miniapp/core/field.hpp"
#include "miniapp/core/verification.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/core/workload_instance.hpp"

#include "kernel_helpers.hpp"
#include "space_types.hpp"

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

// A measurement of the doubling workload on `space`.
MeasurementSpec doubling_spec(std::size_t size, const std::string& space, MirrorPolicy policy) {
  MeasurementSpec spec;
  spec.workload = "doubling";
  spec.variant = "plain";
  spec.size = size;
  spec.space = space;
  spec.policy = policy;
  spec.precision = Precision::Float64;
  return spec;
}

}  // namespace contract_examples

using namespace contract_examples;

TEST(WorkloadContract, TheSmallestWorkloadMeetsItAndRuns) {
  static_assert(contract::check<Doubling>());
  using Host = Kokkos::DefaultHostExecutionSpace;
  const MeasurementSpec spec = doubling_spec(100, space_name<Host>(), MirrorPolicy::Host);
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

// Host mirrors: pageable, or page-locked under ScopedHostMirrors (copy-every-iteration-pinned),
// on every compiled space. On a GPU this runs the pinned path for real; on a host space the
// mirror is the View itself whatever is asked.
template <class Space>
class HostMirrorsTest : public ::testing::Test {};
TYPED_TEST_SUITE(HostMirrorsTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

TYPED_TEST(HostMirrorsTest, FieldsBuiltUnderThePinnedScopeHavePageLockedMirrorsOnDeviceSpaces) {
  using Space = TypeParam;
  const Field<double*, Space> before("before", 10);
  EXPECT_FALSE(before.mirror_is_pinned());
  {
    const ScopedHostMirrors scope(HostMirrors::Pinned);
    Field<double**, Space> f("f", 100, 7);
    EXPECT_EQ(f.host.extent(0), 100u);
    EXPECT_EQ(f.host.extent(1), 7u);
    if (is_host_space<Space>()) {
      EXPECT_TRUE(f.mirror_is_alias());
      EXPECT_FALSE(f.mirror_is_pinned());
    } else {
      EXPECT_FALSE(f.mirror_is_alias());
      EXPECT_TRUE(f.mirror_is_pinned());
#if defined(KOKKOS_ENABLE_CUDA)
      cudaPointerAttributes attributes{};
      ASSERT_EQ(cudaPointerGetAttributes(&attributes, f.host.data()), cudaSuccess);
      EXPECT_EQ(attributes.type, cudaMemoryTypeHost) << "the mirror is not page-locked host memory";
#endif
    }
    // The values make the round trip through the device.
    for (std::size_t i = 0; i < 100; ++i)
      for (std::size_t j = 0; j < 7; ++j) f.host(i, j) = 10.0 * static_cast<double>(i) + static_cast<double>(j) + 0.5;
    f.copy_to_device();
    if (!f.mirror_is_alias()) Kokkos::deep_copy(f.host, -1.0);
    f.copy_to_host();
    for (std::size_t i = 0; i < 100; ++i)
      for (std::size_t j = 0; j < 7; ++j)
        ASSERT_EQ(f.host(i, j), 10.0 * static_cast<double>(i) + static_cast<double>(j) + 0.5) << i << "," << j;
  }
  EXPECT_EQ(host_mirrors_for_new_fields(), HostMirrors::Pageable) << "the scope restores what it found";
  const Field<double*, Space> after("after", 10);
  EXPECT_FALSE(after.mirror_is_pinned());
}

TYPED_TEST(HostMirrorsTest, EveryPolicyRecordsWhatItsMirrorsWere) {
  using Space = TypeParam;
  MeasurementSpec spec = doubling_spec(1000, space_name<Space>(), MirrorPolicy::Host);
  spec.warmup = 1;
  spec.repetitions = 2;
  for (MirrorPolicy policy : miniapp::testing::policies_for<Space>()) {
    spec.policy = policy;
    const Measurement m = Instances<Doubling, Space>::run(spec, Doubling::Params{});
    EXPECT_TRUE(m.verification.passed) << to_string(policy) << ": " << m.verification.detail;
    const std::string expected = is_host_space<Space>() ? "alias" : pins_host_mirrors(policy) ? "pinned" : "pageable";
    EXPECT_EQ(m.host_mirrors, expected) << to_string(policy);
    if (pins_host_mirrors(policy)) {
      EXPECT_EQ(m.bytes_to_device_per_iteration, 1000 * sizeof(double));
      EXPECT_EQ(m.bytes_to_host_per_iteration, 1000 * sizeof(double));
    }
  }
  // A host space refuses the pinned policy; a device space the host one.
  spec.policy = is_host_space<Space>() ? MirrorPolicy::CopyEveryIterationPinned : MirrorPolicy::Host;
  const auto refused = [&] { return Instances<Doubling, Space>::run(spec, Doubling::Params{}); };
  EXPECT_THROW(refused(), std::logic_error);
}
