// NVML energy/utilisation recorder (miniapp/core/nvml.hpp) against the stand-in library that the
// build makes (tests/nvml/nvml_standin.cpp; ctest passes its path in MINIAPP_NVML_STANDIN).

#include "miniapp/core/device_info.hpp"
#include "miniapp/core/nvml.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

using namespace miniapp;
using namespace std::chrono_literals;

namespace {

// The stand-in's controls, from the same library the recorder loads (one copy per process).
struct StandIn {
  void* handle = nullptr;
  void (*configure)(int, int, unsigned long long) = nullptr;
  void (*know_bus_id)(const char*) = nullptr;
  unsigned (*utilization_calls)() = nullptr;
  unsigned long long (*utilization_sum)() = nullptr;
  int (*shutdowns)() = nullptr;
  std::string path;

  StandIn() {
    const char* p = std::getenv("MINIAPP_NVML_STANDIN");
    if (!p) return;
    path = p;
    handle = ::dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    configure = reinterpret_cast<decltype(configure)>(::dlsym(handle, "standin_configure"));
    know_bus_id = reinterpret_cast<decltype(know_bus_id)>(::dlsym(handle, "standin_know_bus_id"));
    utilization_calls = reinterpret_cast<decltype(utilization_calls)>(::dlsym(handle, "standin_utilization_calls"));
    utilization_sum = reinterpret_cast<decltype(utilization_sum)>(::dlsym(handle, "standin_utilization_sum"));
    shutdowns = reinterpret_cast<decltype(shutdowns)>(::dlsym(handle, "standin_shutdowns"));
  }
  ~StandIn() {
    if (handle) ::dlclose(handle);
  }
};

class Nvml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (standin.path.empty()) GTEST_SKIP() << "MINIAPP_NVML_STANDIN is not set (ctest sets it to the stand-in library)";
    ASSERT_NE(standin.handle, nullptr) << "cannot load the stand-in " << standin.path << ": " << ::dlerror();
    ASSERT_TRUE(standin.configure && standin.know_bus_id && standin.utilization_calls && standin.utilization_sum && standin.shutdowns);
  }
  StandIn standin;
};

}  // namespace

TEST(NvmlNull, MissingLibraryGivesNullFieldsWithTheReason) {
  const nvml::Library lib = nvml::Library::load("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(lib.available());
  EXPECT_NE(lib.reason().find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos) << lib.reason();
  nvml::Recorder rec(lib, "0");
  rec.start();
  const nvml::Reading r = rec.stop();
  EXPECT_FALSE(r.energy_joules);
  EXPECT_FALSE(r.mean_power_watts);
  EXPECT_FALSE(r.gpu_utilization_percent);
  EXPECT_EQ(r.unavailable, lib.reason());
}

TEST_F(Nvml, EnergyIsTheCounterDifferenceAndPowerItsRate) {
  standin.configure(0, 1, 5000);  // +5000 mJ between start and stop
  {
    const nvml::Library lib = nvml::Library::load(standin.path);
    ASSERT_TRUE(lib.available()) << lib.reason();
    nvml::Recorder rec(lib, "00000000:65:00.0", 5ms);
    rec.start();
    std::this_thread::sleep_for(50ms);
    const nvml::Reading r = rec.stop();
    ASSERT_TRUE(r.energy_joules) << r.unavailable;
    EXPECT_DOUBLE_EQ(*r.energy_joules, 5.0);
    EXPECT_GE(r.seconds, 0.05);
    ASSERT_TRUE(r.mean_power_watts);
    EXPECT_DOUBLE_EQ(*r.mean_power_watts, 5.0 / r.seconds);
    EXPECT_TRUE(r.unavailable.empty()) << r.unavailable;
  }
  EXPECT_EQ(standin.shutdowns(), 1) << "the library is shut down when it goes";
}

TEST_F(Nvml, UtilisationIsTheMeanOfEverySample) {
  standin.configure(0, 1, 0);
  const nvml::Library lib = nvml::Library::load(standin.path);
  nvml::Recorder rec(lib, "0", 2ms);
  rec.start();
  std::this_thread::sleep_for(30ms);
  const nvml::Reading r = rec.stop();
  const unsigned calls = standin.utilization_calls();
  ASSERT_GE(calls, 2u);
  EXPECT_EQ(r.samples, static_cast<int>(calls));
  ASSERT_TRUE(r.gpu_utilization_percent);
  EXPECT_DOUBLE_EQ(*r.gpu_utilization_percent, static_cast<double>(standin.utilization_sum()) / calls);
  EXPECT_DOUBLE_EQ(*r.energy_joules, 0.0);
}

TEST_F(Nvml, WithoutAnEnergyCounterPowerIsTheMeanOfItsSamples) {
  standin.configure(0, 0, 0);
  const nvml::Library lib = nvml::Library::load(standin.path);
  nvml::Recorder rec(lib, "0", 2ms);
  rec.start();
  std::this_thread::sleep_for(10ms);
  const nvml::Reading r = rec.stop();
  EXPECT_FALSE(r.energy_joules);
  ASSERT_TRUE(r.mean_power_watts);
  EXPECT_DOUBLE_EQ(*r.mean_power_watts, 250.0);
  EXPECT_NE(r.unavailable.find("energy counter: stand-in error 3"), std::string::npos) << r.unavailable;
  EXPECT_TRUE(r.gpu_utilization_percent);
}

TEST_F(Nvml, InitialisationFailureNamesNvmlsError) {
  standin.configure(9, 1, 0);
  const nvml::Library lib = nvml::Library::load(standin.path);
  EXPECT_FALSE(lib.available());
  EXPECT_EQ(lib.reason(), "nvmlInit failed: stand-in error 9 (9)");
}

TEST_F(Nvml, UnknownDeviceGivesNullFieldsWithTheReason) {
  standin.configure(0, 1, 1000);
  const nvml::Library lib = nvml::Library::load(standin.path);
  nvml::Recorder rec(lib, "00000000:17:00.0");
  rec.start();
  const nvml::Reading r = rec.stop();
  EXPECT_FALSE(r.energy_joules);
  EXPECT_FALSE(r.gpu_utilization_percent);
  EXPECT_EQ(r.unavailable, "NVML has no device 00000000:17:00.0: stand-in error 6 (6)");
}

TEST_F(Nvml, StopWithoutStartSaysSo) {
  standin.configure(0, 1, 0);
  const nvml::Library lib = nvml::Library::load(standin.path);
  nvml::Recorder rec(lib, "0");
  EXPECT_EQ(rec.stop().unavailable, "the recorder was not started");
}

// What the harness uses around a device-space measurement: NVML from $MINIAPP_NVML_LIBRARY,
// loaded once per process. (The only test here that calls it: the first call fixes the library.)
TEST_F(Nvml, TheHarnessRecorderLoadsTheLibraryNamedByMiniappNvmlLibrary) {
  standin.configure(0, 1, 2000);  // +2000 mJ between start and stop
  // On a machine with a GPU the recorder asks for the one in use by its PCI bus id (else for
  // index 0): the stand-in answers to that id too (the H100 run found the test asking for it).
  if (const std::optional<GpuInfo> gpu = gpu_in_use({}); gpu && !gpu->pci_bus_id.empty())
    standin.know_bus_id(gpu->pci_bus_id.c_str());
  ASSERT_EQ(::setenv("MINIAPP_NVML_LIBRARY", standin.path.c_str(), 1), 0);
  const std::unique_ptr<nvml::Recorder> rec = nvml::recorder_for_this_process();
  ASSERT_NE(rec, nullptr);
  rec->start();
  std::this_thread::sleep_for(20ms);
  const nvml::Reading r = rec->stop();
  ASSERT_TRUE(r.energy_joules) << r.unavailable;
  EXPECT_DOUBLE_EQ(*r.energy_joules, 2.0);
  ASSERT_TRUE(r.gpu_utilization_percent);
  EXPECT_GE(r.samples, 1);
  EXPECT_TRUE(r.unavailable.empty()) << r.unavailable;
  ::unsetenv("MINIAPP_NVML_LIBRARY");
}
