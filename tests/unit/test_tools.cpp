// Kokkos Tools see every measurement as a region <case>/<space>/<policy>/<precision>/<size>, each
// of its phases as a region <workload>/<variant>/<phase> in it, and every kernel the mini-app
// launches inside a phase, under a label: what a tool loaded through
// KOKKOS_PROFILE_LIBRARY / KOKKOS_TOOLS_LIBS shows (tests/tools/ loads one that way). Here the
// events are recorded through the callbacks Kokkos lets a program set itself.

#include "miniapp/core/deck.hpp"
#include "miniapp/core/harness.hpp"
#include "miniapp/core/kernel_times.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"
#include "space_types.hpp"

#include <gtest/gtest.h>

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

using namespace miniapp;

template <class Space>
class ToolsTest : public ::testing::Test {};
TYPED_TEST_SUITE(ToolsTest, miniapp::testing::SpaceTypes, miniapp::testing::SpaceNames);

namespace {

struct ToolEvent {
  enum Kind { Push, Pop, Kernel } kind;
  std::string name;
};
std::vector<ToolEvent> recorded;

void on_push(const char* name) { recorded.push_back({ToolEvent::Push, name}); }
void on_pop() { recorded.push_back({ToolEvent::Pop, {}}); }
void on_begin(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = recorded.size();
  recorded.push_back({ToolEvent::Kernel, name});
}
void on_end(const std::uint64_t) {}

// The region and kernel callbacks, set for the object's lifetime.
class RecordingTool {
 public:
  RecordingTool() {
    recorded.clear();
    compat::set_region_and_kernel_callbacks(on_push, on_pop, on_begin, on_end);
  }
  ~RecordingTool() { compat::set_region_and_kernel_callbacks(nullptr, nullptr, nullptr, nullptr); }
  RecordingTool(const RecordingTool&) = delete;
  RecordingTool& operator=(const RecordingTool&) = delete;
};

// Kokkos names a kernel launched without a label after its functor's type (typeid's mangled
// name), which a tool shows as such.
bool is_a_type_name(const std::string& name) {
  int status = 1;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::free(demangled);
  return status == 0;
}

}  // namespace

// Each workload's measurement on this space, under every policy the space runs: one outermost
// region, the measurement's; in it the phases, in order (allocate, generate, ..., verify; compute
// once per warm-up and repetition); regions nest properly, every kernel runs inside a phase, with
// a label, and the compute regions hold the workload's kernels.
TYPED_TEST(ToolsTest, EveryPhaseIsARegionAndEveryKernelRunsInOneUnderALabel) {
  const std::string space = space_name<TypeParam>();
  const DeckResult r = load_deck_text(
      "cases:\n"
      "  - {name: power, workload: matrix, variant: elementwise, op: power, rows: 3, sizes: [1000]}\n"
      "  - {name: gemm, workload: matrix, variant: gemm-tiled, sizes: [24]}\n"
      "  - {name: distance, workload: distance, variant: direct, sizes: [40]}\n"
      "  - {name: solver, workload: solver, variant: batched-thread, systems: 6, sizes: [5]}\n"
      "  - {name: fit, workload: regression, variant: fused, iterations: 4, sizes: [50]}\n"
      "defaults: {spaces: [" + space + "], policies: all, warmup: 1, repetitions: 2, precision: float64}\n",
      "tools.yaml");
  ASSERT_TRUE(r.deck) << format(r.diagnostics.all().front());
  const std::set<std::string> phases{"allocate", "generate", "setup_to_device", "to_device",
                                     "compute", "to_host", "final_to_host", "verify"};
  for (const MeasurementSpec& spec : expand(*r.deck)) {
    const std::string prefix = spec.workload + "/" + spec.variant + "/";
    SCOPED_TRACE(prefix + std::string(to_string(spec.policy)));
    Measurement m;
    {
      const RecordingTool tool;
      m = find_workload(spec.workload)->run(spec, r.deck->cases.at(spec.case_index).params);
    }
    EXPECT_TRUE(m.verification.passed) << m.verification.detail;
    std::vector<std::string> stack, outermost, order;
    int kernels_in_compute = 0;
    for (const ToolEvent& e : recorded) {
      if (e.kind == ToolEvent::Push) {
        if (stack.empty()) outermost.push_back(e.name);
        if (stack.size() == 1) {
          ASSERT_EQ(e.name.rfind(prefix, 0), 0u) << "region '" << e.name << "' in the measurement's";
          const std::string phase = e.name.substr(prefix.size());
          EXPECT_EQ(phases.count(phase), 1u) << "region '" << e.name << "' in the measurement's is no phase";
          order.push_back(phase);
        }
        stack.push_back(e.name);
      } else if (e.kind == ToolEvent::Pop) {
        ASSERT_FALSE(stack.empty()) << "a region was popped that was never pushed";
        stack.pop_back();
      } else {
        EXPECT_GE(stack.size(), 2u) << "kernel '" << e.name << "' ran outside every phase";
        EXPECT_FALSE(e.name.empty() || is_a_type_name(e.name)) << "a kernel without a label: '" << e.name << "'";
        if (stack.size() == 2 && stack.back() == prefix + "compute") {
          ++kernels_in_compute;
          EXPECT_EQ(e.name.rfind(spec.workload + "::", 0), 0u) << "kernel '" << e.name << "' in compute";
        }
      }
    }
    EXPECT_TRUE(stack.empty()) << stack.size() << " region(s) never popped, the first '" << stack.front() << "'";
    EXPECT_EQ(outermost, std::vector<std::string>{detail::measurement_region(spec)});
    EXPECT_EQ(outermost.front(), spec.case_name + "/" + space + "/" + std::string(to_string(spec.policy)) +
                                     "/float64/" + std::to_string(spec.size));
    ASSERT_GE(order.size(), 4u);
    EXPECT_EQ(order[0], "allocate");
    EXPECT_EQ(order[1], "generate");
    EXPECT_EQ(order.back(), "verify");
    EXPECT_EQ(std::count(order.begin(), order.end(), "compute"), spec.warmup + spec.repetitions);
    EXPECT_GE(kernels_in_compute, spec.warmup + spec.repetitions);
  }
}

// --kernel-times (core/kernel_times.hpp) on this space: each phase's kernels under the
// measurement's and the phase's regions, the compute phase entered once per warm-up and
// repetition, no kernel longer than the region it ran in; Kokkos' callbacks cleared after stop().
TYPED_TEST(ToolsTest, KernelTimesPutEachPhasesKernelsInItsRegion) {
  const std::string space = space_name<TypeParam>();
  const DeckResult r = load_deck_text(
      "cases:\n"
      "  - {name: power, workload: matrix, variant: elementwise, op: power, rows: 3, sizes: [1000]}\n"
      "defaults: {spaces: [" + space + "], policies: [copy-every-iteration], warmup: 1, repetitions: 2,"
      " precision: float64}\n",
      "kernel-times.yaml");
  ASSERT_TRUE(r.deck) << format(r.diagnostics.all().front());
  const MeasurementSpec spec = expand(*r.deck).front();
  kernel_times::start();
  const Measurement m = find_workload(spec.workload)->run(spec, r.deck->cases.at(spec.case_index).params);
  kernel_times::stop();
  EXPECT_FALSE(Kokkos::Tools::profileLibraryLoaded());
  EXPECT_TRUE(m.verification.passed) << m.verification.detail;
  const std::string measurement = detail::measurement_region(spec);
  std::map<std::string, kernel_times::RegionTotal> phases;
  for (const kernel_times::RegionTotal& region : kernel_times::totals()) {
    ASSERT_FALSE(region.path.empty());
    EXPECT_EQ(region.path.front(), measurement);
    if (region.path.size() == 2) phases[region.path[1]] = region;
    EXPECT_LE(region.kernel_seconds(), region.seconds);
    for (std::size_t i = 1; i < region.kernels.size(); ++i)
      EXPECT_GE(region.kernels[i - 1].seconds, region.kernels[i].seconds) << "not most seconds first";
  }
  const kernel_times::RegionTotal& compute = phases["matrix/elementwise/compute"];
  EXPECT_EQ(compute.entries, 3u);
  ASSERT_FALSE(compute.kernels.empty());
  EXPECT_EQ(compute.kernels.front().name.rfind("matrix::", 0), 0u) << compute.kernels.front().name;
  EXPECT_EQ(compute.kernels.front().launches % 3, 0u);
  ASSERT_FALSE(phases["matrix/elementwise/to_device"].kernels.empty());
  EXPECT_EQ(phases["matrix/elementwise/to_device"].kernels.front().name.rfind("deep_copy ", 0), 0u);
  EXPECT_GT(phases["matrix/elementwise/generate"].seconds, 0.0);
}

// Kernel and region times on a clock: a kernel that sleeps 30 ms inside an inner region counts
// there and only there; the outer region holds the inner one and 20 ms of host work, no kernel.
TEST(KernelTimes, AKernelCountsInTheInnermostRegionForAsLongAsItRuns) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  kernel_times::start();
  Kokkos::Profiling::pushRegion("outer");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Kokkos::Profiling::pushRegion("inner");
  Kokkos::parallel_for("sleeps", Kokkos::RangePolicy<Host>(0, 1),
                       [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
  Kokkos::Profiling::popRegion();
  Kokkos::Profiling::popRegion();
  kernel_times::stop();
  const std::vector<kernel_times::RegionTotal> t = kernel_times::totals();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].path, std::vector<std::string>{"outer"});
  EXPECT_EQ(t[1].path, (std::vector<std::string>{"outer", "inner"}));
  EXPECT_TRUE(t[0].kernels.empty());
  ASSERT_EQ(t[1].kernels.size(), 1u);
  EXPECT_EQ(t[1].kernels[0].name, "sleeps");
  EXPECT_EQ(t[1].kernels[0].launches, 1u);
  EXPECT_GE(t[1].kernels[0].seconds, 0.030);
  EXPECT_GE(t[1].seconds, t[1].kernels[0].seconds);
  EXPECT_GE(t[0].seconds, t[1].seconds + 0.020);
  const std::string json = kernel_times::to_json(t);
  EXPECT_NE(json.find("\"outer\",\n        \"inner\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\": \"sleeps\""), std::string::npos) << json;
}

// Another listener (a Kokkos Tools library, here the test's recording callbacks) already holds
// Kokkos' callbacks: --kernel-times refuses rather than take them over.
TEST(KernelTimes, RefusesWhereAToolAlreadyListens) {
  const RecordingTool tool;
  EXPECT_THROW(kernel_times::start(), std::runtime_error);
  EXPECT_FALSE(kernel_times::running());
}
