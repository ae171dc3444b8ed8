#include "miniapp/core/nvml.hpp"

#include "miniapp/core/device_info.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <numeric>
#include <type_traits>
#include <utility>

namespace miniapp::nvml {

namespace {
// NVML's types as its ABI defines them (nvml.h is not needed to build).
using nvmlReturn_t = int;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned gpu;
  unsigned memory;
};
}  // namespace

struct Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*);
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*);

  std::string error(nvmlReturn_t code) const {
    const char* text = error_string ? error_string(code) : nullptr;
    return (text ? std::string(text) : std::string("NVML error")) + " (" + std::to_string(code) + ")";
  }
};

Library Library::load(const std::string& path) {
  Library lib;
  lib.handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle_) {
    const char* why = ::dlerror();
    lib.reason_ = "cannot load " + path + (why ? std::string(": ") + why : std::string());
    return lib;
  }
  auto api = std::make_unique<Api>();
  std::string missing;
  auto resolve = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib.handle_, name));
    if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  resolve(api->init, "nvmlInit_v2");
  resolve(api->shutdown, "nvmlShutdown");
  resolve(api->error_string, "nvmlErrorString");
  resolve(api->by_index, "nvmlDeviceGetHandleByIndex_v2");
  resolve(api->by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  resolve(api->total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  resolve(api->utilization, "nvmlDeviceGetUtilizationRates");
  resolve(api->power_usage, "nvmlDeviceGetPowerUsage");
  if (!missing.empty()) {
    lib.reason_ = path + " lacks " + missing;
    return lib;
  }
  if (const nvmlReturn_t rc = api->init(); rc != NVML_SUCCESS) {
    lib.reason_ = "nvmlInit failed: " + api->error(rc);
    return lib;
  }
  lib.api_ = std::move(api);
  return lib;
}

Library::Library(Library&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), api_(std::move(other.api_)), reason_(std::move(other.reason_)) {}

Library& Library::operator=(Library&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    api_ = std::move(other.api_);
    reason_ = std::move(other.reason_);
  }
  return *this;
}

Library::~Library() { close(); }

void Library::close() {
  if (api_) api_->shutdown();
  api_.reset();
  if (handle_) ::dlclose(handle_);
  handle_ = nullptr;
}

Recorder::Recorder(const Library& library, std::string device, std::chrono::milliseconds period)
    : period_(period) {
  if (!library.available()) {
    unavailable_ = library.reason();
    return;
  }
  const Api* api = library.api();
  nvmlDevice_t handle = nullptr;
  const bool is_index = !device.empty() && std::all_of(device.begin(), device.end(), [](unsigned char c) {
    return std::isdigit(c);
  });
  const nvmlReturn_t rc = is_index ? api->by_index(static_cast<unsigned>(std::stoul(device)), &handle)
                                   : api->by_pci_bus_id(device.c_str(), &handle);
  if (rc != NVML_SUCCESS) {
    unavailable_ = "NVML has no device " + device + ": " + api->error(rc);
    return;
  }
  api_ = api;
  device_ = handle;
}

Recorder::~Recorder() {
  running_ = false;
  if (sampler_.joinable()) sampler_.join();
}

void Recorder::sample() {
  const auto device = static_cast<nvmlDevice_t>(device_);
  nvmlUtilization_t u{};
  if (const nvmlReturn_t rc = api_->utilization(device, &u); rc == NVML_SUCCESS)
    utilization_.push_back(u.gpu);
  else if (utilization_unavailable_.empty())
    utilization_unavailable_ = "utilisation: " + api_->error(rc);
  unsigned mW = 0;
  if (api_->power_usage(device, &mW) == NVML_SUCCESS) power_mW_.push_back(mW);
}

void Recorder::start() {
  if (!api_ || running_) return;
  utilization_.clear();
  power_mW_.clear();
  utilization_unavailable_.clear();
  energy_unavailable_.clear();
  energy_start_mJ_.reset();
  unsigned long long mJ = 0;
  if (const nvmlReturn_t rc = api_->total_energy(static_cast<nvmlDevice_t>(device_), &mJ); rc == NVML_SUCCESS)
    energy_start_mJ_ = mJ;
  else
    energy_unavailable_ = "energy counter: " + api_->error(rc);
  started_ = std::chrono::steady_clock::now();
  running_ = true;
  sampler_ = std::thread([this] {
    while (running_) {
      sample();
      std::this_thread::sleep_for(period_);
    }
  });
}

Reading Recorder::stop() {
  Reading r;
  if (!api_) {
    r.unavailable = unavailable_;
    return r;
  }
  if (!running_) {
    r.unavailable = "the recorder was not started";
    return r;
  }
  running_ = false;
  sampler_.join();
  sample();  // at least one sample, however short the phase
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  r.samples = static_cast<int>(utilization_.size());
  std::vector<std::string> why;
  unsigned long long mJ = 0;
  if (energy_start_mJ_ && api_->total_energy(static_cast<nvmlDevice_t>(device_), &mJ) == NVML_SUCCESS &&
      mJ >= *energy_start_mJ_) {
    r.energy_joules = static_cast<double>(mJ - *energy_start_mJ_) / 1000.0;
    if (r.seconds > 0) r.mean_power_watts = *r.energy_joules / r.seconds;
  } else {
    why.push_back(energy_unavailable_.empty() ? "energy counter: unreadable at the end" : energy_unavailable_);
    if (!power_mW_.empty())
      r.mean_power_watts = std::accumulate(power_mW_.begin(), power_mW_.end(), 0.0) / power_mW_.size() / 1000.0;
  }
  if (!utilization_.empty())
    r.gpu_utilization_percent =
        std::accumulate(utilization_.begin(), utilization_.end(), 0.0) / static_cast<double>(utilization_.size());
  else
    why.push_back(utilization_unavailable_);
  for (const auto& w : why) r.unavailable += (r.unavailable.empty() ? "" : "; ") + w;
  return r;
}

std::unique_ptr<Recorder> recorder_for_this_process() {
  // Loaded on first use and kept until exit: nvmlInit/nvmlShutdown once, not per measurement.
  static const Library library = [] {
    const char* path = std::getenv("MINIAPP_NVML_LIBRARY");
    return Library::load(path && *path ? std::string(path) : std::string("libnvidia-ml.so.1"));
  }();
  static const std::string device = [] {
    const std::optional<GpuInfo> gpu = gpu_in_use({});
    return gpu && !gpu->pci_bus_id.empty() ? gpu->pci_bus_id : std::string("0");
  }();
  return std::make_unique<Recorder>(library, device);
}

}  // namespace miniapp::nvml
