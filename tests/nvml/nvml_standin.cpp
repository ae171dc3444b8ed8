// A stand-in for libnvidia-ml.so.1 with the entry points miniapp/core/nvml.cpp resolves, so the
// loading, the arithmetic and the null paths are tested without a GPU (tests/unit/test_nvml.cpp).
// Its behaviour is set, and its calls counted, through the standin_* functions.

#include <atomic>
#include <cstdio>
#include <cstring>

// The types in the entry points' signatures stay out of the unnamed namespace: nvcc's front end
// gives an extern "C" function taking an internal-linkage type internal linkage, and dlsym then
// finds no such entry point (found on the first CUDA build's unit.common).
struct nvmlDevice_st {
  int index;
};
struct Utilization {
  unsigned gpu;
  unsigned memory;
};

namespace {
nvmlDevice_st device0{0};

std::atomic<int> init_result{0};
std::atomic<bool> energy_supported{true};
std::atomic<unsigned long long> energy_mJ{1000};
std::atomic<unsigned long long> energy_step_mJ{0};
std::atomic<unsigned> utilization_calls{0};
std::atomic<unsigned long long> utilization_sum{0};
std::atomic<int> shutdowns{0};
// A second bus id it answers to: the GPU's own, where the test runs on a machine with one (the
// harness recorder asks for the device in use by its PCI bus id).
char known_bus_id[64] = {};
constexpr int kNotFound = 6, kNotSupported = 3, kInvalidArgument = 2;
}  // namespace

extern "C" {

// The stand-in's own controls.
void standin_configure(int init, int energy, unsigned long long step_mJ) {
  init_result = init;
  energy_supported = energy != 0;
  energy_step_mJ = step_mJ;
  energy_mJ = 1000;
  utilization_calls = 0;
  utilization_sum = 0;
  shutdowns = 0;
  known_bus_id[0] = '\0';
}
void standin_know_bus_id(const char* bus) { std::snprintf(known_bus_id, sizeof known_bus_id, "%s", bus); }
unsigned standin_utilization_calls() { return utilization_calls; }
unsigned long long standin_utilization_sum() { return utilization_sum; }
int standin_shutdowns() { return shutdowns; }

// NVML's entry points (return codes as NVML's: 0 success).
int nvmlInit_v2() { return init_result; }
int nvmlShutdown() {
  ++shutdowns;
  return 0;
}
const char* nvmlErrorString(int code) {
  static thread_local char text[64];
  std::snprintf(text, sizeof text, "stand-in error %d", code);
  return text;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  if (index != 0) return kInvalidArgument;
  *device = &device0;
  return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, nvmlDevice_st** device) {
  if (std::strcmp(bus, "00000000:65:00.0") != 0 && (known_bus_id[0] == '\0' || std::strcmp(bus, known_bus_id) != 0))
    return kNotFound;
  *device = &device0;
  return 0;
}
// Each reading advances the counter by the configured step: start() and stop() read it once each.
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_st*, unsigned long long* mJ) {
  if (!energy_supported) return kNotSupported;
  *mJ = energy_mJ.fetch_add(energy_step_mJ);
  return 0;
}
// Alternates 40 and 90 %, so that the mean depends on every sample.
int nvmlDeviceGetUtilizationRates(nvmlDevice_st*, Utilization* u) {
  const unsigned n = utilization_calls++;
  u->gpu = n % 2 == 0 ? 40 : 90;
  u->memory = 10;
  utilization_sum += u->gpu;
  return 0;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_st*, unsigned* mW) {
  *mW = 250000;
  return 0;
}
}
