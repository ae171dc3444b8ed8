#include "miniapp/calibration/calibration.hpp"
#include "miniapp/calibration/probe.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/record/writers.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

using namespace miniapp;
using namespace miniapp::calibration;
namespace fs = std::filesystem;

namespace {

ProbeSizes small_sizes() {
  ProbeSizes s;
  s.stream_values = 1 << 16;
  s.gemm_max_n = 256;  // one GEMM size: 256
  s.link_bytes = 1 << 20;
  s.launches = 20;
  s.repetitions = 2;
  return s;
}

Key this_key() {
  Key k;
  k.git_commit = "test";
  k.hostname = "host";
  k.cpu_model = "cpu";
  k.kokkos_version = "x";
  k.host_threads = 2;
  k.cpus_allowed = 2;
  return k;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/miniapp-calibration-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

template <class Space>
class CalibrationTest : public ::testing::Test {};
TYPED_TEST_SUITE(CalibrationTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

TYPED_TEST(CalibrationTest, TheProbeMeasuresAndChecksItsOwnResults) {
  const std::string space = space_name<TypeParam>();
  const SpaceCalibration c = probe(space, small_sizes());
  EXPECT_EQ(c.space, space);
  EXPECT_EQ(c.host, is_host_space<TypeParam>());
  EXPECT_GT(c.copy_GBps, 0);
  EXPECT_GT(c.triad_GBps, 0);
  EXPECT_GT(c.vendor_copy_GBps, 0);
  EXPECT_EQ(c.stream_bytes, (std::size_t{1} << 16) * sizeof(double));
  ASSERT_EQ(c.gemm_GFLOPs.size(), 2u);
  EXPECT_GT(c.gemm_GFLOPs.at("float32"), 0);
  EXPECT_GT(c.gemm_GFLOPs.at("float64"), 0);
  EXPECT_EQ(c.gemm_n.at("float64"), 256);
  EXPECT_GT(c.launch_latency_us, 0);
  EXPECT_NE(c.verified.find("stream arrays"), std::string::npos) << c.verified;
  EXPECT_NE(c.verified.find("float64 GEMM"), std::string::npos) << c.verified;
  EXPECT_NE(c.verified.find("float32 GEMM"), std::string::npos) << c.verified;
  if (is_host_space<TypeParam>()) {
    EXPECT_FALSE(c.link.has_value());
  } else {
    ASSERT_TRUE(c.link.has_value());
    EXPECT_GT(c.link->pageable_to_device, 0);
    EXPECT_GT(c.link->pinned_to_host, 0);
    EXPECT_NE(c.verified.find("link copies"), std::string::npos);
  }
}

// The stream kernels' forms on every space (devices run the strided one with
// kDeviceStreamPerThread values a thread): every element of values that differ by index, so a
// value moved to the wrong place, one skipped or one written twice would show; sizes that K
// divides and that it does not, smaller than K.
template <class Space, class Copy, class Triad>
void expect_stream_form_moves_every_value(const std::string& form, const Copy& copy, const Triad& triad) {
  using Memory = typename Space::memory_space;
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, std::size_t{1001}}) {
    SCOPED_TRACE(form + ", " + std::to_string(n) + " values");
    Kokkos::View<double*, Memory> a("a", n), b("b", n), c("c", n);
    auto ha = Kokkos::create_mirror_view(a), hb = Kokkos::create_mirror_view(b);
    for (std::size_t i = 0; i < n; ++i) ha(i) = 0.5 + static_cast<double>(i), hb(i) = 2.0 * static_cast<double>(i);
    Kokkos::deep_copy(a, ha);
    Kokkos::deep_copy(b, hb);
    Kokkos::deep_copy(c, -1.0);
    copy(Space(), Kokkos::View<const double*, Memory>(a), c);  // c = a
    triad(Space(), a, Kokkos::View<const double*, Memory>(b), Kokkos::View<const double*, Memory>(c),
          kernels::kScalar);  // a = b + 0.4 c
    const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
    const auto out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(hc(i), 0.5 + static_cast<double>(i)) << "c(" << i << ")";
      ASSERT_EQ(out(i), 2.0 * static_cast<double>(i) + kernels::kScalar * hc(i)) << "a(" << i << ")";
    }
  }
}

TYPED_TEST(CalibrationTest, TheStreamKernelsMoveEveryValueToItsPlace) {
  using Space = TypeParam;
  expect_stream_form_moves_every_value<Space>("the space's form", [](auto&&... x) { kernels::copy(x...); },
                                              [](auto&&... x) { kernels::triad(x...); });
  expect_stream_form_moves_every_value<Space>(
      "plain", [](auto&&... x) { kernels::copy_plain(x...); }, [](auto&&... x) { kernels::triad_plain(x...); });
  expect_stream_form_moves_every_value<Space>(
      "strided, 4 a thread", [](auto&&... x) { kernels::copy_strided<4>(x...); },
      [](auto&&... x) { kernels::triad_strided<4>(x...); });
  expect_stream_form_moves_every_value<Space>(
      "strided, 3 a thread", [](auto&&... x) { kernels::copy_strided<3>(x...); },
      [](auto&&... x) { kernels::triad_strided<3>(x...); });
}

// The probe's own checks, given planted wrong values (the probe cannot be made to compute one).
TYPED_TEST(CalibrationTest, AStreamArrayWithOneWrongElementFailsTheProbe) {
  using Memory = typename TypeParam::memory_space;
  const std::string space = space_name<TypeParam>();
  Kokkos::View<double*, Memory> v("v", 1000);
  auto plant = [&](double value) {
    Kokkos::deep_copy(v, 0.5);
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    host(777) = value;
    Kokkos::deep_copy(v, host);
  };
  auto check = [&] {
    kernels::check_stream_array(TypeParam(), space, "b", Kokkos::View<const double*, Memory>(v), 0.5);
  };
  plant(0.5);
  EXPECT_NO_THROW(check());
  plant(0.5 * (1 + 2 * std::numeric_limits<double>::epsilon()));  // a fused multiply-add's rounding
  EXPECT_NO_THROW(check());
  plant(0.5 + 1e-9);
  try {
    check();
    ADD_FAILURE() << "an element off by 1e-9 passed";
  } catch (const ProbeFailed& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(space + ": the stream probe's array b should hold 0.5 everywhere"), std::string::npos) << what;
    EXPECT_NE(what.find("differs by 1e-09"), std::string::npos) << what;
  }
  plant(std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW(check(), ProbeFailed);
}

TEST(Calibration, AGemmProductWithOneWrongCheckedEntryFailsTheProbe) {
  const std::int64_t n = 64;
  auto exact = [&](auto scalar) {
    using Scalar = decltype(scalar);
    Kokkos::View<Scalar**, Kokkos::LayoutRight, Kokkos::HostSpace> c("c", n, n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t k = 0; k < n; ++k) sum += kernels::gemm_a(i, k) * kernels::gemm_b(k, j);
        c(i, j) = Scalar(sum);
      }
    return c;
  };
  auto c64 = exact(double{});
  EXPECT_NO_THROW(kernels::check_gemm_product("serial", "float64", c64));
  auto c32 = exact(float{});
  EXPECT_NO_THROW(kernels::check_gemm_product("serial", "float32", c32));
  for (int s : {0, 5, kernels::kGemmCheckedEntries - 1}) {
    const auto [i, j] = kernels::gemm_checked_entry(s, n);
    auto wrong = exact(float{});
    wrong(i, j) += 1;
    const std::string entry = "C(" + std::to_string(i) + "," + std::to_string(j) + ")";
    try {
      kernels::check_gemm_product("cuda", "float32", wrong);
      ADD_FAILURE() << entry << " off by one passed";
    } catch (const ProbeFailed& e) {
      EXPECT_NE(std::string(e.what()).find("cuda: the float32 GEMM probe (n = 64) computed " + entry), std::string::npos)
          << e.what();
    }
  }
}

TYPED_TEST(CalibrationTest, ASignalStopsTheProbe) {
  install_interrupt_handlers();
  std::raise(SIGTERM);
  EXPECT_THROW(probe(space_name<TypeParam>(), small_sizes()), Interrupted);
  clear_interrupt_request();
}

TYPED_TEST(CalibrationTest, ACacheFileIsReusedForTheSameKeyOnly) {
  const std::string space = space_name<TypeParam>();
  TempDir dir;
  const std::string file = (dir.path / "calibration.json").string();
  std::ostringstream log;
  const Calibration first = calibrate({space}, this_key(), {file, ""}, &log, small_sizes());
  ASSERT_EQ(first.spaces.size(), 1u);
  EXPECT_TRUE(first.reused_from.empty());
  EXPECT_NE(log.str().find("calibrating " + space), std::string::npos) << log.str();
  const std::string written = read(file);

  log.str("");
  const Calibration second = calibrate({space}, this_key(), {file, ""}, &log, small_sizes());
  EXPECT_EQ(second.reused_from.at(space), file);
  EXPECT_EQ(second.spaces[0].triad_GBps, first.spaces[0].triad_GBps);
  EXPECT_EQ(second.spaces[0].measured_at, first.spaces[0].measured_at);
  EXPECT_EQ(log.str().find("calibrating"), std::string::npos) << log.str();
  EXPECT_EQ(read(file), written) << "a reused calibration leaves the file as it was";

  Key other = this_key();
  other.host_threads = 3;
  log.str("");
  const Calibration third = calibrate({space}, other, {file, ""}, &log, small_sizes());
  EXPECT_TRUE(third.reused_from.empty());
  EXPECT_NE(log.str().find("another build, machine or thread count"), std::string::npos) << log.str();
  std::string why;
  const auto rewritten = from_cache_json(read(file), why);
  ASSERT_TRUE(rewritten) << why;
  EXPECT_EQ(rewritten->key.host_threads, 3);
}

TEST(Calibration, AnUnreadableCacheFileIsMeasuredAgainWithTheReason) {
  TempDir dir;
  const std::string file = (dir.path / "calibration.json").string();
  std::ofstream(file) << "{\"schema\": \"kokkos-miniapp-calibration/1\", \"key\": {\"git_commit\": ";
  std::ostringstream log;
  const std::string space = compiled_space_names().front();
  const Calibration c = calibrate({space}, this_key(), {file, ""}, &log, small_sizes());
  EXPECT_TRUE(c.reused_from.empty());
  EXPECT_NE(log.str().find("not using " + file), std::string::npos) << log.str();
  std::string why;
  EXPECT_TRUE(from_cache_json(read(file), why)) << why;
}

TEST(Calibration, SpacesOfTheCacheThatARunDoesNotUseStayInTheFile) {
  TempDir dir;
  const std::string file = (dir.path / "calibration.json").string();
  SpaceCalibration other;
  other.space = "elsewhere";
  other.copy_GBps = other.triad_GBps = 1;
  other.gemm_GFLOPs["float64"] = 1;
  other.gemm_n["float64"] = 256;
  other.measured_at = "then";
  Calibration old;
  old.key = this_key();
  old.spaces.push_back(other);
  std::ofstream(file) << to_cache_json(old);
  const std::string space = compiled_space_names().front();
  const Calibration c = calibrate({space}, this_key(), {file, ""}, nullptr, small_sizes());
  ASSERT_EQ(c.spaces.size(), 1u);
  std::string why;
  const auto kept = from_cache_json(read(file), why);
  ASSERT_TRUE(kept) << why;
  ASSERT_EQ(kept->spaces.size(), 2u);
  ASSERT_NE(kept->find("elsewhere"), nullptr);
  EXPECT_EQ(kept->find("elsewhere")->measured_at, "then");
}

TEST(Calibration, TheMachineCacheServesNewOutputDirectoriesWhileItIsYoung) {
  TempDir dir;
  const std::string machine = (dir.path / "machine" / "calibration-host.json").string();
  const std::string space = compiled_space_names().front();
  const std::string out1 = (dir.path / "a.json").string(), out2 = (dir.path / "b.json").string();
  const Calibration first = calibrate({space}, this_key(), {out1, machine}, nullptr, small_sizes());
  ASSERT_TRUE(fs::exists(machine)) << "a probe is kept for later runs";
  std::ostringstream log;
  const Calibration second = calibrate({space}, this_key(), {out2, machine}, &log, small_sizes());
  EXPECT_EQ(second.reused_from.at(space), machine);
  EXPECT_EQ(second.spaces[0].measured_at, first.spaces[0].measured_at);
  std::string why;
  ASSERT_TRUE(from_cache_json(read(out2), why)) << "the output directory gets its own copy: " << why;

  // Aged past the limit: measured again, and said why.
  fs::last_write_time(machine, fs::file_time_type::clock::now() - std::chrono::hours(25));
  const std::string out3 = (dir.path / "c.json").string();
  log.str("");
  const Calibration third = calibrate({space}, this_key(), {out3, machine, 24 * 3600.0}, &log, small_sizes());
  EXPECT_TRUE(third.reused_from.empty());
  EXPECT_NE(log.str().find("older than 24 hours"), std::string::npos) << log.str();

  // --recalibrate: a probe although both files hold this space.
  const Calibration fresh = calibrate({space}, this_key(), {out3, machine}, nullptr, small_sizes(), true);
  EXPECT_TRUE(fresh.reused_from.empty());
}

TEST(Calibration, TheMachineCacheIsNamedForHostAndKey) {
  setenv("MINIAPP_CALIBRATION_CACHE", "/some/dir", 1);
  const std::string a = default_machine_cache(this_key());
  Key other = this_key();
  other.git_commit = "another";
  const std::string b = default_machine_cache(other);
  unsetenv("MINIAPP_CALIBRATION_CACHE");
  EXPECT_EQ(a.rfind("/some/dir/calibration-host-", 0), 0u) << a;
  EXPECT_NE(a, b);
}

TEST(Calibration, TheCacheFileRoundTrips) {
  SpaceCalibration s;
  s.space = "cuda";
  s.host = false;
  s.copy_GBps = 1800.5;
  s.triad_GBps = 1900.25;
  s.vendor_copy_GBps = 2850.75;
  s.stream_bytes = 1 << 29;
  s.gemm_GFLOPs = {{"float32", 40000.0}, {"float64", 50000.0}};
  s.gemm_n = {{"float32", 8192}, {"float64", 8192}};
  s.launch_latency_us = 4.5;
  s.link = Link{10.5, 11.5, 25.0, 26.0};
  s.seconds = 1.25;
  s.measured_at = "2026-11-22T00:00:00Z";
  s.verified = "checked";
  Calibration c;
  c.key = this_key();
  c.key.gpu_pci_bus_id = "0000:01:00.0";
  c.spaces = {s};
  std::string why;
  const auto back = from_cache_json(to_cache_json(c), why);
  ASSERT_TRUE(back) << why;
  EXPECT_TRUE(back->key == c.key);
  const SpaceCalibration& b = back->spaces.at(0);
  EXPECT_EQ(b.space, "cuda");
  EXPECT_FALSE(b.host);
  EXPECT_EQ(b.triad_GBps, 1900.25);
  EXPECT_EQ(b.vendor_copy_GBps, 2850.75);
  EXPECT_EQ(b.gemm_GFLOPs, s.gemm_GFLOPs);
  EXPECT_EQ(b.gemm_n, s.gemm_n);
  ASSERT_TRUE(b.link);
  EXPECT_EQ(b.link->pinned_to_device, 25.0);
  EXPECT_EQ(b.link->pageable_to_host, 11.5);
  EXPECT_EQ(b.measured_at, s.measured_at);

  // A cache written before the vendor copy was measured still reads, with that rate unknown (0).
  std::string older = to_cache_json(c);
  const std::string field = ",\n        \"vendor_copy\": 2850.75";
  ASSERT_NE(older.find(field), std::string::npos) << older;
  older.erase(older.find(field), field.size());
  const auto before = from_cache_json(older, why);
  ASSERT_TRUE(before) << why;
  EXPECT_EQ(before->spaces.at(0).vendor_copy_GBps, 0);

  EXPECT_FALSE(from_cache_json("{\"schema\": \"kokkos-miniapp-results/1\"}", why));
  EXPECT_NE(why.find("not a kokkos-miniapp-calibration/1 file"), std::string::npos) << why;
}

TEST(Calibration, ARooflinePlaceIsTheBoundOfTheKernelsIntensity) {
  SpaceCalibration c;
  c.copy_GBps = 90;
  c.triad_GBps = 100;  // the better stream rate is the memory roof
  c.gemm_GFLOPs = {{"float64", 400.0}};
  WorkEstimate w;
  w.flops = 1e9;
  w.bytes_read = 3e9;
  w.bytes_written = 1e9;  // 0.25 flops per byte: memory roof 25 GFLOP/s
  const auto memory = place(c, Precision::Float64, w, 0.1);  // 10 GFLOP/s reached
  ASSERT_TRUE(memory);
  EXPECT_DOUBLE_EQ(memory->intensity, 0.25);
  EXPECT_DOUBLE_EQ(memory->bound_GFLOPs, 25);
  EXPECT_DOUBLE_EQ(memory->fraction, 0.4);
  EXPECT_EQ(memory->limited_by, "memory");
  EXPECT_EQ(memory->bandwidth_from, "triad");

  SpaceCalibration vendor = c;  // the vendor's copy faster than the space's own kernels: it is the roof
  vendor.vendor_copy_GBps = 200;
  const auto by_vendor = place(vendor, Precision::Float64, w, 0.1);
  ASSERT_TRUE(by_vendor);
  EXPECT_DOUBLE_EQ(by_vendor->bandwidth_GBps, 200);
  EXPECT_DOUBLE_EQ(by_vendor->bound_GFLOPs, 50);
  EXPECT_EQ(by_vendor->bandwidth_from, "vendor copy");

  w.bytes_read = 1e6;
  w.bytes_written = 0;  // 1000 flops per byte: the GEMM roof
  const auto compute = place(c, Precision::Float64, w, 0.005);  // 200 GFLOP/s
  ASSERT_TRUE(compute);
  EXPECT_DOUBLE_EQ(compute->bound_GFLOPs, 400);
  EXPECT_DOUBLE_EQ(compute->fraction, 0.5);
  EXPECT_EQ(compute->limited_by, "compute");

  EXPECT_FALSE(place(c, Precision::Float32, w, 0.005)) << "no float32 GEMM rate measured: no roof";
  w.flops = 0;
  EXPECT_FALSE(place(c, Precision::Float64, w, 0.005));
}

TEST(Calibration, ResultsPlaceEachMeasurementUnderItsOwnSpace) {
  Deck deck;
  deck.cases.emplace_back();
  RunRecord run;
  run.deck = &deck;
  Calibration cal;
  SpaceCalibration serial;
  serial.space = "serial";
  serial.copy_GBps = serial.triad_GBps = 10;
  serial.gemm_GFLOPs = {{"float64", 50.0}};
  cal.spaces = {serial};
  run.calibration = cal;
  Measurement m;
  m.spec.space = "serial";
  m.spec.precision = Precision::Float64;
  m.work.flops = 2e9;
  m.work.bytes_read = 1e9;
  m.seconds.compute = {1.0, 0.1, 0.2};  // median 0.2 s: 10 GFLOP/s of a 20 GFLOP/s bound
  const auto p = roofline(run, m);
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->fraction, 0.5);
  m.spec.space = "openmp";
  EXPECT_FALSE(roofline(run, m)) << "openmp was not calibrated";
  run.calibration.reset();
  m.spec.space = "serial";
  EXPECT_FALSE(roofline(run, m));
}
