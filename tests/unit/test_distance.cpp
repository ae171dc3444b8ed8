#include "miniapp/workloads/distance/distance.hpp"

#include "space_types.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace miniapp;

template <class Space>
class DistanceTest : public ::testing::Test {};
TYPED_TEST_SUITE(DistanceTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

namespace {

template <class Scalar, class Space>
void run_once(distance::Kernel<Scalar, Space>& k) {
  for (Transferable* f : k.inputs()) f->copy_to_device();
  Space space;
  k.compute(space);
  space.fence();
  for (Transferable* f : k.outputs()) f->copy_to_host();
}

template <class Scalar, class Space>
void check_known_triangle(bool squared) {
  distance::Params p;
  p.squared = squared;
  distance::Kernel<Scalar, Space> k(p, "direct", 3);
  auto pts = k.points().host;
  const double coords[3][3] = {{0, 0, 0}, {3, 0, 0}, {3, 4, 0}};
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 3; ++d) pts(i, d) = static_cast<Scalar>(coords[i][d]);
  run_once(k);
  const auto D = k.distances().host;
  const double e01 = squared ? 9 : 3, e12 = squared ? 16 : 4, e02 = squared ? 25 : 5;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(D(i, i), Scalar(0)) << "diagonal " << i;
  EXPECT_NEAR(D(0, 1), e01, 1e-5);
  EXPECT_NEAR(D(1, 2), e12, 1e-5);
  EXPECT_NEAR(D(0, 2), e02, 1e-5);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(D(i, j), D(j, i)) << i << "," << j;
}

template <class Space>
std::vector<MirrorPolicy> policies_for() {
  std::vector<MirrorPolicy> out;
  for (MirrorPolicy p : kAllMirrorPolicies)
    if (p != MirrorPolicy::Host || is_host_space<Space>()) out.push_back(p);
  return out;
}

MeasurementSpec spec_for(MirrorPolicy policy, int repetitions = 2) {
  MeasurementSpec s;
  s.policy = policy;
  s.warmup = 1;
  s.repetitions = repetitions;
  s.seed = 1234;
  return s;
}

}  // namespace

TYPED_TEST(DistanceTest, KnownTriangleFloat) { check_known_triangle<float, TypeParam>(false); }
TYPED_TEST(DistanceTest, KnownTriangleDouble) { check_known_triangle<double, TypeParam>(false); }
TYPED_TEST(DistanceTest, KnownTriangleSquared) { check_known_triangle<double, TypeParam>(true); }

TYPED_TEST(DistanceTest, EveryPolicyVerifiesAndGivesTheSameMatrix) {
  using Space = TypeParam;
  const std::size_t n = 123;  // not a multiple of any tile size
  distance::Params p;
  p.dim = 5;
  std::vector<float> first;
  for (MirrorPolicy policy : policies_for<Space>()) {
    distance::Kernel<float, Space> k(p, "direct", n);
    const Measurement m = measure(k, Space(), spec_for(policy));
    EXPECT_TRUE(m.verification.checked);
    EXPECT_TRUE(m.verification.passed) << to_string(policy) << ": " << m.verification.detail;
    const auto D = k.distances().host;
    std::vector<float> values(D.data(), D.data() + n * n);
    if (first.empty()) first = values;
    else EXPECT_EQ(values, first) << "policy " << to_string(policy) << " changed the result";
  }
}

TYPED_TEST(DistanceTest, InputsGeneratedOnTheDeviceEqualHostGeneratedOnes) {
  using Space = TypeParam;
  distance::Params p;
  p.dim = 4;
  distance::Kernel<double, Space> on_host(p, "direct", 50), on_device(p, "direct", 50);
  MeasurementSpec spec = spec_for(MirrorPolicy::InputsResident, 1);
  const Measurement mh = measure(on_host, Space(), spec);
  spec.generate = Generation::Device;
  const Measurement md = measure(on_device, Space(), spec);
  EXPECT_TRUE(md.verification.passed) << md.verification.detail;
  // Device-generated inputs are already in place: no one-time input copy.
  EXPECT_EQ(md.seconds.setup_to_device, 0.0);
  EXPECT_EQ(md.bytes_one_time, 0u);
  const auto a = on_host.points().host, b = on_device.points().host;
  for (std::size_t i = 0; i < 50; ++i)
    for (std::size_t k = 0; k < 4; ++k) ASSERT_EQ(a(i, k), b(i, k)) << i << "," << k;
}

TYPED_TEST(DistanceTest, CorruptedEntryFailsVerificationAndIsNamed) {
  using Space = TypeParam;
  distance::Kernel<double, Space> k(distance::Params{}, "direct", 40);
  k.generate_inputs(9);
  run_once(k);
  ASSERT_TRUE(k.verify(std::nullopt).passed);
  k.distances().host(5, 7) += 1e-3;
  const Verification v = k.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("D(5,7)"), std::string::npos) << v.detail;
  EXPECT_GT(v.max_abs_error, 0.9e-3);
}

TYPED_TEST(DistanceTest, HarnessRecordsPhasesAndTransfersPerPolicy) {
  using Space = TypeParam;
  const std::size_t n = 64;
  distance::Params p;
  for (MirrorPolicy policy : policies_for<Space>()) {
    distance::Kernel<float, Space> k(p, "direct", n);
    const Measurement m = measure(k, Space(), spec_for(policy, 3));
    ASSERT_EQ(m.seconds.compute.size(), 3u);
    ASSERT_EQ(m.seconds.to_device.size(), 3u);
    ASSERT_EQ(m.seconds.to_host.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_GT(m.seconds.compute[i], 0.0);
      EXPECT_DOUBLE_EQ(m.seconds.total[i], m.seconds.to_device[i] + m.seconds.compute[i] + m.seconds.to_host[i]);
    }
    const std::size_t in_bytes = is_host_space<Space>() ? 0 : n * 3 * sizeof(float);
    const std::size_t out_bytes = is_host_space<Space>() ? 0 : n * n * sizeof(float);
    EXPECT_EQ(m.mirrors_alias, is_host_space<Space>());
    switch (policy) {
      case MirrorPolicy::Host:
        EXPECT_EQ(m.bytes_to_device_per_iteration + m.bytes_to_host_per_iteration + m.bytes_one_time, 0u);
        break;
      case MirrorPolicy::CopyEveryIteration:
        EXPECT_EQ(m.bytes_to_device_per_iteration, in_bytes);
        EXPECT_EQ(m.bytes_to_host_per_iteration, out_bytes);
        break;
      case MirrorPolicy::InputsResident:
        EXPECT_EQ(m.bytes_to_device_per_iteration, 0u);
        EXPECT_EQ(m.bytes_to_host_per_iteration, out_bytes);
        EXPECT_EQ(m.bytes_one_time, in_bytes);
        break;
      case MirrorPolicy::AllResident:
        EXPECT_EQ(m.bytes_to_device_per_iteration + m.bytes_to_host_per_iteration, 0u);
        EXPECT_EQ(m.bytes_one_time, in_bytes + out_bytes);
        break;
    }
  }
}

TYPED_TEST(DistanceTest, WorkEstimateCountsEntries) {
  distance::Params p;
  p.dim = 4;
  distance::Kernel<double, TypeParam> k(p, "direct", 10);
  const WorkEstimate w = k.work();
  EXPECT_DOUBLE_EQ(w.flops, 100.0 * (3 * 4 + 1));
  EXPECT_DOUBLE_EQ(w.bytes_written, 100.0 * sizeof(double));
  EXPECT_DOUBLE_EQ(w.bytes_read, 10.0 * 4 * sizeof(double));
}

TEST(DistanceReference, LargeMatricesAreCheckedOnAnEvenSampleOfRows) {
  const auto rows = distance::reference_rows(100000);
  ASSERT_EQ(rows.size(), distance::kSampledRows);
  EXPECT_EQ(rows.front(), 0u);
  EXPECT_EQ(rows.back(), 99999u);
  EXPECT_EQ(distance::reference_rows(100).size(), 100u);
}
