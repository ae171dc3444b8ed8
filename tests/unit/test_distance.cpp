#include "miniapp/core/pack16.hpp"
#include "miniapp/workloads/distance/direct_flat.hpp"
#include "miniapp/workloads/distance/distance.hpp"

#include "kernel_helpers.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace miniapp;
using miniapp::testing::policies_for;
using miniapp::testing::run_once;

template <class Space>
class DistanceTest : public ::testing::Test {};
TYPED_TEST_SUITE(DistanceTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

namespace {

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
  const auto D = k.matrix_host();
  const double e01 = squared ? 9 : 3, e12 = squared ? 16 : 4, e02 = squared ? 25 : 5;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(D(i, i), Scalar(0)) << "diagonal " << i;
  EXPECT_NEAR(D(0, 1), e01, 1e-5);
  EXPECT_NEAR(D(1, 2), e12, 1e-5);
  EXPECT_NEAR(D(0, 2), e02, 1e-5);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(D(i, j), D(j, i)) << i << "," << j;
}

MeasurementSpec distance_spec(MirrorPolicy policy, int repetitions = 2) {
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
    const Measurement m = measure(k, Space(), distance_spec(policy));
    EXPECT_TRUE(m.verification.checked);
    EXPECT_TRUE(m.verification.passed) << to_string(policy) << ": " << m.verification.detail;
    const auto D = k.matrix_host();
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
  MeasurementSpec spec = distance_spec(MirrorPolicy::InputsResident, 1);
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
  k.matrix_host()(5, 7) += 1e-3;
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
    const Measurement m = measure(k, Space(), distance_spec(policy, 3));
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
    // The GPU's energy is read on device spaces only (null fields where NVML is missing).
    EXPECT_EQ(m.gpu_energy.has_value(), !is_host_space<Space>());
    if (m.gpu_energy && m.gpu_energy->energy_joules) EXPECT_GE(*m.gpu_energy->energy_joules, 0.0);
    if (m.gpu_energy && !m.gpu_energy->energy_joules) EXPECT_FALSE(m.gpu_energy->unavailable.empty());
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

namespace {
// gemm only where this build has Kokkos Kernels.
const std::vector<std::string> kVariants =
    miniapp::testing::runnable("distance", {"direct", "symmetric", "gemm", "tiled"});

template <class Scalar, class Space>
std::vector<Scalar> matrix_of(distance::Kernel<Scalar, Space>& k) {
  const auto D = k.matrix_host();
  return std::vector<Scalar>(D.data(), D.data() + D.size());
}
}  // namespace

TYPED_TEST(DistanceTest, EveryVariantVerifiesUnderEveryPolicyAndAgreesWithDirect) {
  using Space = TypeParam;
  const std::size_t n = 77;  // not a multiple of any tile
  for (bool squared : {false, true}) {
    distance::Params p;
    p.squared = squared;
    distance::Kernel<double, Space> reference(p, "direct", n);
    measure(reference, Space(), distance_spec(MirrorPolicy::InputsResident, 1));
    const auto R = reference.matrix_host();
    for (const std::string& variant : kVariants)
      for (MirrorPolicy policy : policies_for<Space>()) {
        distance::Kernel<double, Space> k(p, variant, n);
        const Measurement m = measure(k, Space(), distance_spec(policy, 1));
        EXPECT_TRUE(m.verification.passed) << variant << " " << to_string(policy) << ": " << m.verification.detail;
        const auto D = k.matrix_host();
        const double tol = variant == "gemm" ? 1e-6 : 1e-14;
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) ASSERT_NEAR(D(i, j), R(i, j), tol) << variant << " " << i << "," << j;
      }
  }
}

TYPED_TEST(DistanceTest, DirectAndTiledAgreeExactlyAcrossDimensions) {
  using Space = TypeParam;
  for (int dim : {1, 2, 3, 7}) {
    distance::Params p;
    p.dim = dim;
    distance::Kernel<float, Space> direct(p, "direct", 300), tiled(p, "tiled", 300), symmetric(p, "symmetric", 300);
    for (auto* k : {&direct, &tiled, &symmetric}) {
      const Measurement m = measure(*k, Space(), distance_spec(MirrorPolicy::AllResident, 1));
      EXPECT_TRUE(m.verification.passed) << "dim " << dim << ": " << m.verification.detail;
    }
    EXPECT_EQ(matrix_of(tiled), matrix_of(direct)) << "dim " << dim;
    EXPECT_EQ(matrix_of(symmetric), matrix_of(direct)) << "dim " << dim;
  }
}

namespace {
// n points of `dim` coordinates from `seed`, in the space as the kernel holds them (k.points())
// and coordinate-major (`coordinates`, as the workload's kernels read them).
template <class Scalar, class Space>
struct PointsInSpace {
  distance::Kernel<Scalar, Space> k;
  Kokkos::View<Scalar**, Kokkos::LayoutLeft, typename Space::memory_space> coordinates;
  PointsInSpace(int dim, std::size_t n, std::uint64_t seed)
      : k(params(dim), "direct", n), coordinates("coordinates", n, dim) {
    k.generate_inputs(seed);
    k.points().copy_to_device();
    distance::kernels::coordinate_major(Space(), k.points().device, coordinates, dim);
  }
  static distance::Params params(int dim) {
    distance::Params p;
    p.dim = dim;
    return p;
  }
};

// Entries of rows [row0, row0 + rows) where a form of the matrix (form(space, coordinates, out,
// row0, rows, dim) into the rows' own View) differs from direct's on the same coordinate-major
// points; an entry the form misses stays -1 and counts.
template <class Space, class Form>
std::size_t entries_unlike_direct(int dim, std::size_t n, std::int64_t row0, std::int64_t rows, std::uint64_t seed,
                                  const Form& form) {
  const PointsInSpace<float, Space> points(dim, n, seed);
  const auto& coordinates = points.coordinates;
  const Space space;
  using Memory = typename Space::memory_space;
  Kokkos::View<float**, Kokkos::LayoutRight, Memory> formed("form", rows, n), direct("direct", rows, n);
  Kokkos::deep_copy(formed, -1.0f);
  form(space, coordinates, formed, row0, rows, dim);
  distance::kernels::direct(space, coordinates, direct, row0, rows, dim, false);
  const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), formed);
  const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), direct);
  std::size_t differing = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < n; ++j) differing += a(i, j) != b(i, j);
  return differing;
}

// symmetric's tiles of 32 (the workload's on host spaces) and 64 (on devices), and 64 with the
// column points held (Held), give direct's whole matrix bit for bit.
template <int T, class Space, bool Held = false>
void expect_symmetric_tiles_equal_direct(int dim, std::size_t n) {
  const auto rows = static_cast<std::int64_t>(n);
  EXPECT_EQ(entries_unlike_direct<Space>(dim, n, 0, rows, 5,
                                         [](const Space& space, const auto& coordinates, const auto& out, std::int64_t,
                                            std::int64_t, int d) {
                                           distance::kernels::symmetric<T, Held>(space, coordinates, out, d, false);
                                         }),
            0u)
      << "tiles of " << T << (Held ? ", held columns" : "") << ", dim " << dim << ", n " << n;
}

// tiled's block form (a team per tile of Rows rows x columns; Held: the column points held in
// registers) gives direct's rows bit for bit.
template <class Space, bool Held = false, int Rows = distance::kernels::kTileRows>
void expect_tiled_blocks_equal_direct(int dim, std::size_t n, std::int64_t row0, std::int64_t rows) {
  EXPECT_EQ(entries_unlike_direct<Space>(dim, n, row0, rows, 8,
                                         [](const Space& space, const auto& coordinates, const auto& out,
                                            std::int64_t first, std::int64_t count, int d) {
                                           distance::kernels::tiled_blocks<Held, Rows>(space, coordinates, out, first,
                                                                                       count, d, false);
                                         }),
            0u)
      << (Held ? "held, " : "") << Rows << " rows a team, dim " << dim << ", n " << n << ", rows " << row0 << " + "
      << rows;
}
}  // namespace

// tiled's block form: one tile and several (dim 7 and 1 outrun a host tile's columns), row counts
// not a multiple of the block, a block starting inside the matrix.
TYPED_TEST(DistanceTest, TiledBlocksGiveDirectsRowsExactly) {
  expect_tiled_blocks_equal_direct<TypeParam>(3, 1, 0, 1);
  expect_tiled_blocks_equal_direct<TypeParam>(3, 300, 0, 300);
  expect_tiled_blocks_equal_direct<TypeParam>(7, 3000, 37, 20);
  expect_tiled_blocks_equal_direct<TypeParam>(1, 5000, 0, 17);
  expect_tiled_blocks_equal_direct<TypeParam>(2, 700, 3, 33);
  // held: a tile of 256 columns and a part-filled one, and rows past a team's block
  expect_tiled_blocks_equal_direct<TypeParam, true>(3, 300, 0, 300);
  expect_tiled_blocks_equal_direct<TypeParam, true>(2, 700, 3, 33);
  expect_tiled_blocks_equal_direct<TypeParam, true, 32>(3, 600, 5, 70);
  expect_tiled_blocks_equal_direct<TypeParam, true>(7, 3000, 37, 20);  // dim read at run time: the plain form
}

// direct_flat<K, false>, the benchmarks' bound probe (distance-direct-flat-k16-compute): every
// entry computed, none written, so each entry of its rows stays as it was.
TYPED_TEST(DistanceTest, FlatFormsBoundProbeWritesNoEntry) {
  for (const std::size_t n : {1, 40, 1000}) {
    const auto rows = static_cast<std::int64_t>(n < 40 ? n : 40);
    EXPECT_EQ(entries_unlike_direct<TypeParam>(3, n, 0, rows, 9,
                                               [](const TypeParam& space, const auto& coordinates, const auto& out,
                                                  std::int64_t first, std::int64_t count, int d) {
                                                 distance::kernels::direct_flat<16, false>(space, coordinates, out,
                                                                                           first, count, d, false);
                                               }),
              static_cast<std::size_t>(rows) * n)
        << "n " << n;
  }
}

// symmetric: orders below, at and around a tile, across dimensions (1 and 7 read at run time,
// where the held form is the plain one; 2 and 3 compiled in).
TYPED_TEST(DistanceTest, SymmetricTilesGiveDirectsMatrixExactly) {
  for (int dim : {1, 2, 3, 7})
    for (std::size_t n : {1, 31, 32, 33, 64, 65, 200}) {
      expect_symmetric_tiles_equal_direct<32, TypeParam>(dim, n);
      expect_symmetric_tiles_equal_direct<64, TypeParam>(dim, n);  // the device spaces' kSymmetricTile
      expect_symmetric_tiles_equal_direct<64, TypeParam, true>(dim, n);  // held: prepared for devices
    }
  // the larger tiles prepared for devices (96 and 128: level-1 scratch on CUDA), around a tile
  for (int dim : {2, 3, 7})
    for (std::size_t n : {1, 95, 96, 97, 129, 300}) {
      expect_symmetric_tiles_equal_direct<96, TypeParam>(dim, n);
      expect_symmetric_tiles_equal_direct<128, TypeParam>(dim, n);
    }
}

namespace {
// Rows [row0, row0 + rows) of the matrix by direct_flat<K> (R > 1: direct_block<R, K>), by
// direct's team form and by direct (the form the workload runs on this space), on the same
// coordinate-major points; all three must agree bit for bit.
template <int K, class Space, int R = 1>
void expect_flat_equals_direct(int dim, std::size_t n, std::int64_t row0, std::int64_t rows, bool squared) {
  const PointsInSpace<float, Space> points(dim, n, 99);
  const auto& coordinates = points.coordinates;
  const Space space;
  using Memory = typename Space::memory_space;
  Kokkos::View<float**, Kokkos::LayoutRight, Memory> flat("flat", rows, n), team("team", rows, n),
      chosen("chosen", rows, n);
  Kokkos::deep_copy(flat, -1.0f);  // an entry the kernel misses stays -1
  Kokkos::deep_copy(chosen, -1.0f);
  if constexpr (R > 1) distance::kernels::direct_block<R, K>(space, coordinates, flat, row0, rows, dim, squared);
  else distance::kernels::direct_flat<K>(space, coordinates, flat, row0, rows, dim, squared);
  distance::kernels::direct_team(space, coordinates, team, row0, rows, dim, squared);
  distance::kernels::direct(space, coordinates, chosen, row0, rows, dim, squared);
  const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flat);
  const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), team);
  const auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chosen);
  std::size_t differing = 0, chosen_differing = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      differing += a(i, j) != b(i, j);
      chosen_differing += c(i, j) != b(i, j);
    }
  EXPECT_EQ(differing, 0u) << "R " << R << ", K " << K << ", dim " << dim << ", n " << n << ", rows " << row0 << " + " << rows
                           << (squared ? ", squared" : "");
  EXPECT_EQ(chosen_differing, 0u) << "direct, dim " << dim << ", n " << n << ", rows " << row0 << " + " << rows;
  EXPECT_EQ(a(0, row0), 0.0f) << "the diagonal";
}
}  // namespace

TYPED_TEST(DistanceTest, FlatMappingOfDirectEqualsDirectExactly) {
  using Space = TypeParam;
  constexpr int entries_per_thread = distance::kernels::kDirectPerThread;  // the workload's own K
  constexpr int rows_per_thread = distance::kernels::kDirectBlockRows;     // and R
  for (int dim : {1, 2, 3, 7})
    for (bool squared : {false, true}) {
      // n not a multiple of K (the last thread of a row takes fewer columns), the whole matrix and
      // one block starting inside it
      expect_flat_equals_direct<1, Space>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<3, Space>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<4, Space>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<8, Space>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<16, Space>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<16, Space>(dim, 3, 1, 2, squared);
      expect_flat_equals_direct<entries_per_thread, Space, rows_per_thread>(dim, 301, 37, 100, squared);
      expect_flat_equals_direct<entries_per_thread, Space, rows_per_thread>(dim, 3, 1, 2, squared);  // fewer columns than K
      // blocks of R rows: row counts not a multiple of R, a block starting inside the matrix
      expect_flat_equals_direct<8, Space, 2>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<4, Space, 4>(dim, 301, 37, 99, squared);
      expect_flat_equals_direct<8, Space, 4>(dim, 301, 0, 301, squared);
      expect_flat_equals_direct<8, Space, 4>(dim, 3, 1, 2, squared);
    }
}

namespace {
// Rows [row0, row0 + rows) by direct_packs<R, K> into columns [offset, offset + n) of a View
// `offset` values wider than n (offset 0: rows 16-byte aligned where n is a whole number of packs),
// against direct's team form on the coordinate-major points, bit for bit. given: the pack form
// reads the points as the kernel holds them. Whether the packs ran (packs_fit) is asserted as the
// caller expects, so a case meant for the 16-byte stores cannot pass through the fallback.
template <class Scalar, int R, int K, class Space>
void expect_packs_equal_direct(int dim, std::size_t n, std::int64_t row0, std::int64_t rows, bool squared,
                               std::size_t offset, bool given, bool packs_expected) {
  PointsInSpace<Scalar, Space> points(dim, n, 7);
  const auto& coordinates = points.coordinates;
  const Space space;
  using Memory = typename Space::memory_space;
  Kokkos::View<Scalar**, Kokkos::LayoutRight, Memory> wide("wide", rows, n + offset), team("team", rows, n);
  Kokkos::deep_copy(wide, Scalar(-1));  // an entry the kernel misses stays -1
  const auto out = Kokkos::subview(wide, Kokkos::ALL(), Kokkos::make_pair(offset, offset + n));
  const bool fits = distance::kernels::packs_fit(out) && (dim == 2 || dim == 3);
  EXPECT_EQ(fits, packs_expected) << "n " << n << ", offset " << offset << ", dim " << dim;
  if (given) distance::kernels::direct_packs<R, K>(space, points.k.points().device, out, row0, rows, dim, squared);
  else distance::kernels::direct_packs<R, K>(space, coordinates, out, row0, rows, dim, squared);
  distance::kernels::direct_team(space, coordinates, team, row0, rows, dim, squared);
  const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), wide);
  const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), team);
  std::size_t differing = 0, outside = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < n; ++j) differing += a(i, offset + j) != b(i, j);
    for (std::size_t j = 0; j < offset; ++j) outside += a(i, j) != Scalar(-1);
  }
  EXPECT_EQ(differing, 0u) << "R " << R << ", K " << K << ", dim " << dim << ", n " << n << ", rows " << row0 << " + "
                           << rows << ", offset " << offset << (given ? ", points as given" : "")
                           << (squared ? ", squared" : "");
  EXPECT_EQ(outside, 0u) << "written outside the output";
}

template <class Scalar, class Space>
void expect_pack_forms_equal_direct() {
  constexpr std::size_t w = Pack16<Scalar>::kValues;
  for (int dim : {1, 2, 3, 7}) {
    const bool compiled = dim == 2 || dim == 3;  // other dimensions: the block form
    for (bool squared : {false, true}) {
      // whole packs: every row aligned; rows not a multiple of R, a block starting inside
      expect_packs_equal_direct<Scalar, 4, 8, Space>(dim, 300, 0, 300, squared, 0, false, compiled);
      expect_packs_equal_direct<Scalar, 4, 8, Space>(dim, 300, 37, 99, squared, 0, true, compiled);
      expect_packs_equal_direct<Scalar, 4, 16, Space>(dim, 300, 0, 300, squared, 0, false, compiled);
      expect_packs_equal_direct<Scalar, 1, 8, Space>(dim, 300, 5, 30, squared, 0, true, compiled);
      // fewer packs than a thread takes; one pack
      expect_packs_equal_direct<Scalar, 4, 16, Space>(dim, 2 * w, 0, 2 * w, squared, 0, false, compiled);
      expect_packs_equal_direct<Scalar, 4, 8, Space>(dim, w, 0, w, squared, 0, true, compiled);
      // not whole packs, rows off the 16-byte boundary: direct_block's stores
      expect_packs_equal_direct<Scalar, 4, 8, Space>(dim, 301, 0, 301, squared, 0, false, false);
      expect_packs_equal_direct<Scalar, 4, 8, Space>(dim, 300, 0, 50, squared, 1, true, false);
      expect_packs_equal_direct<Scalar, 4, 8, Space>(dim, 300, 0, 50, squared, w, false, compiled);
    }
  }
}
}  // namespace

// direct's 16-byte store form (prepared for devices) on every space, float32 (packs of 4) and
// float64 (of 2).
TYPED_TEST(DistanceTest, PackFormOfDirectEqualsDirectExactly) {
  expect_pack_forms_equal_direct<float, TypeParam>();
  expect_pack_forms_equal_direct<double, TypeParam>();
}

// An output over kStreamOutputBytes, whose host rows go out through non-temporal stores: rows
// of 2901 floats start at every alignment, so each row has a head and a tail of plain stores, and
// the odd row count leaves one row to the row-at-a-time loop.
TYPED_TEST(DistanceTest, StreamedOutputOfDirectEqualsTheFlatMappingExactly) {
  using Space = TypeParam;
  const std::size_t n = 2901;
  ASSERT_GT(n * n * sizeof(float), distance::kernels::kStreamOutputBytes);
  for (int dim : {2, 3})
    for (bool squared : {false, true})
      expect_flat_equals_direct<distance::kernels::kDirectPerThread, Space, distance::kernels::kDirectBlockRows>(
          dim, n, 0, n, squared);
}

TYPED_TEST(DistanceTest, ChunkedRunsEqualUnchunkedOnesExactly) {
  using Space = TypeParam;
  const std::size_t n = 203;
  for (const std::string& variant : kVariants) {
    distance::Params whole;
    distance::Kernel<float, Space> unchunked(whole, variant, n);
    measure(unchunked, Space(), distance_spec(MirrorPolicy::AllResident, 1));
    ASSERT_FALSE(unchunked.block_plan().chunked);
    for (MirrorPolicy policy : policies_for<Space>()) {
      distance::Params p;
      p.chunk_rows = 50;  // 5 blocks, the last one short
      distance::Kernel<float, Space> chunked(p, variant, n);
      const Measurement m = measure(chunked, Space(), distance_spec(policy, 2));
      ASSERT_TRUE(chunked.block_plan().chunked);
      EXPECT_EQ(chunked.block_plan().blocks, 5u);
      EXPECT_TRUE(m.verification.passed) << variant << ": " << m.verification.detail;
      EXPECT_NE(m.verification.detail.find("chunked: 5 blocks of 50 rows"), std::string::npos) << m.verification.detail;
      // The output lives on the host only: the harness moves nothing, compute copies the blocks.
      EXPECT_EQ(m.bytes_to_host_per_iteration, 0u);
      if (variant != "gemm") EXPECT_EQ(matrix_of(chunked), matrix_of(unchunked)) << variant;
    }
  }
}

TEST(DistancePlan, MemoryBudgetChoosesRowBlocks) {
  distance::Params p;
  const std::size_t n = 1000, s = sizeof(float);
  EXPECT_FALSE(distance::plan_blocks(p, n, s, std::nullopt).chunked);
  EXPECT_FALSE(distance::plan_blocks(p, n, s, std::size_t(1) << 30).chunked);
  const distance::BlockPlan plan = distance::plan_blocks(p, n, s, 1000000);  // 1 MB < 4 MB matrix
  EXPECT_TRUE(plan.chunked);
  EXPECT_LE(plan.rows_per_block * n * s * distance::kBlockBuffers + 2 * n * 3 * s + n * s, 1000000u);
  EXPECT_EQ(plan.blocks, (n + plan.rows_per_block - 1) / plan.rows_per_block);
  p.output = distance::Output::RowMin;
  EXPECT_FALSE(distance::plan_blocks(p, n, s, 1000).chunked);
}

TEST(DistancePlan, FootprintOfReductionsIsLinearAndChunkedMatrixIsOnTheHost) {
  distance::Params p;
  p.output = distance::Output::RowMin;
  MeasurementSpec spec;
  spec.space = "serial";
  spec.size = 1000000;
  spec.precision = Precision::Float32;
  const Footprint rows = distance::DistanceWorkload::footprint(p, spec);
  EXPECT_EQ(rows.space_bytes, 1000000u * (2 * 3 * 4 + 4 + 8));  // points as given and coordinate-major
  p.output = distance::Output::Matrix;
  p.memory_budget = 64u << 20;
  spec.size = 20000;
  const Footprint chunked = distance::DistanceWorkload::footprint(p, spec);
  EXPECT_LE(chunked.space_bytes, 64u << 20);
  EXPECT_EQ(chunked.host_only_bytes, 20000u * 20000u * 4u);
}

TEST(DistanceParse, BytesWithUnits) {
  EXPECT_EQ(distance::parse_bytes("512MiB"), std::optional<std::size_t>(512u << 20));
  EXPECT_EQ(distance::parse_bytes("2GB"), std::optional<std::size_t>(2000000000u));
  EXPECT_EQ(distance::parse_bytes("1e6"), std::optional<std::size_t>(1000000u));
  EXPECT_EQ(distance::parse_bytes("4096"), std::optional<std::size_t>(4096u));
  EXPECT_FALSE(distance::parse_bytes("lots"));
  EXPECT_FALSE(distance::parse_bytes("12 parsecs"));
  EXPECT_FALSE(distance::parse_bytes("-5MB"));
}

TYPED_TEST(DistanceTest, GemmLosesAccuracyForNearIdenticalPoints) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("distance", "gemm");
  const std::size_t n = 64;
  double worst[2] = {0, 0};
  int which = 0;
  for (const std::string& variant : miniapp::testing::runnable("distance", {"direct", "gemm"})) {
    distance::Kernel<float, Space> k(distance::Params{}, variant, n);
    // A cluster of width 1e-3 around (0.5, 0.5, 0.5): |x|^2 ~ 0.75 over distances ~ 1e-3.
    auto pts = k.points().host;
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) pts(i, d) = static_cast<float>(0.5 + 1e-3 * uniform01(5, i * 3 + d));
    run_once(k);
    const Verification v = k.verify(std::nullopt);
    EXPECT_TRUE(v.passed) << variant << ": " << v.detail;
    const auto D = k.matrix_host();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) {
          const double ref = static_cast<double>(distance::reference_distance(pts, i, j, 3, false));
          worst[which] = std::max(worst[which], std::abs(D(i, j) - ref) / ref);
        }
    ++which;
  }
  EXPECT_LT(worst[0], 1e-6) << "direct";
  EXPECT_GT(worst[1], 1e-3) << "gemm keeps accuracy it cannot have: x2 + y2 - 2 x.y cancels";
  EXPECT_GT(worst[1], 1000 * worst[0]);
}

TYPED_TEST(DistanceTest, RowReductionsMatchTheMatrix) {
  using Space = TypeParam;
  const std::size_t n = 150;
  distance::Params p;
  p.dim = 4;
  distance::Kernel<double, Space> matrix(p, "direct", n);
  measure(matrix, Space(), distance_spec(MirrorPolicy::AllResident, 1));
  const auto D = matrix.matrix_host();
  for (MirrorPolicy policy : policies_for<Space>()) {
    p.output = distance::Output::RowMin;
    distance::Kernel<double, Space> mins(p, "direct", n);
    const Measurement mm = measure(mins, Space(), distance_spec(policy, 1));
    EXPECT_TRUE(mm.verification.passed) << mm.verification.detail;
    p.output = distance::Output::RowSum;
    distance::Kernel<double, Space> sums(p, "tiled", n);
    const Measurement ms = measure(sums, Space(), distance_spec(policy, 1));
    EXPECT_TRUE(ms.verification.passed) << ms.verification.detail;
    for (std::size_t i = 0; i < n; ++i) {
      double best = INFINITY, total = 0;
      for (std::size_t j = 0; j < n; ++j) {
        total += D(i, j);
        if (j != i) best = std::min(best, D(i, j));
      }
      EXPECT_EQ(mins.nearest().host(i), best) << i;
      const auto idx = mins.nearest_index().host(i);
      ASSERT_GE(idx, 0);
      EXPECT_EQ(D(i, static_cast<std::size_t>(idx)), best) << i;
      EXPECT_NEAR(sums.row_sums().host(i), total, 1e-12 * total) << i;
    }
  }
}

TYPED_TEST(DistanceTest, CorruptedReductionsAndStructureFailVerification) {
  using Space = TypeParam;
  distance::Params p;
  p.output = distance::Output::RowMin;
  distance::Kernel<double, Space> k(p, "direct", 30);
  k.generate_inputs(3);
  run_once(k);
  ASSERT_TRUE(k.verify(std::nullopt).passed);
  k.nearest_index().host(4) = 4;  // itself
  Verification v = k.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("nearest index(4) = 4"), std::string::npos) << v.detail;

  distance::Kernel<double, Space> m(distance::Params{}, "symmetric", 3000);  // rows sampled beyond 2048
  m.generate_inputs(3);
  run_once(m);
  ASSERT_TRUE(m.verify(std::nullopt).passed);
  m.matrix_host()(1, 1) = 0.5;  // row 1 is not sampled: the diagonal check finds it
  v = m.verify(std::nullopt);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("diagonal D(1,1)"), std::string::npos) << v.detail;
}

// A float64 gemm matrix that was in fact computed in float32 must fail. The float32 result used
// is the most accurate one there is, the direct form (about 6e-8 of each distance off): if the
// float64 bound catches it, it catches any float32 computation. The bound is derived per pair from
// the cancellation that pair can have in x2 + y2 - 2 x.y (about 1e-13 here), not from
// sqrt(eps) over the typical distance (2.3e-7, which let this pass).
TYPED_TEST(DistanceTest, GemmFloat64BoundCatchesAFloat32Computation) {
  using Space = TypeParam;
  MINIAPP_SKIP_IF_UNAVAILABLE("distance", "gemm");
  const std::size_t n = 100;
  for (bool squared : {false, true}) {
    distance::Params p;
    p.squared = squared;
    distance::Kernel<double, Space> k64(p, "gemm", n);
    k64.generate_inputs(21);
    run_once(k64);
    ASSERT_TRUE(k64.verify(std::nullopt).passed) << k64.verify(std::nullopt).detail;
    distance::Kernel<float, Space> k32(p, "direct", n);
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < p.dim; ++d) k32.points().host(i, d) = static_cast<float>(k64.points().host(i, d));
    run_once(k32);
    ASSERT_TRUE(k32.verify(std::nullopt).passed) << k32.verify(std::nullopt).detail;
    const auto D64 = k64.matrix_host();
    const auto D32 = k32.matrix_host();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) D64(i, j) = D32(i, j);
    const Verification v = k64.verify(std::nullopt);
    EXPECT_FALSE(v.passed) << (squared ? "squared: " : "") << v.detail;
  }
}
