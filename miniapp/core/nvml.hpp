#pragma once
// Energy and utilisation of an NVIDIA GPU around one measurement, through NVML loaded at run time
// (dlopen of libnvidia-ml.so.1): no build-time dependency, and on machines without it (no NVIDIA
// driver, an AMD GPU, a host-only build) every field is null with the reason.
//
//   nvml::Library nvml = nvml::Library::load();          // once per process
//   nvml::Recorder rec(nvml, gpu->pci_bus_id);            // the device the run uses
//   rec.start();  ...compute phase, fenced...  nvml::Reading r = rec.stop();
//
// What is measured:
// - energy_joules: the difference of the device's total-energy counter
//   (nvmlDeviceGetTotalEnergyConsumption, millijoules since the driver loaded; Volta and later)
//   read at start() and stop();
// - mean_power_watts: that energy over the seconds between the two readings; where the counter
//   is not supported, the mean of the power readings (nvmlDeviceGetPowerUsage) sampled meanwhile;
// - gpu_utilization_percent: the mean of nvmlDeviceGetUtilizationRates' `gpu` value sampled every
//   `period` while the recorder runs: the share of time in which at least one kernel ran on the
//   device, as nvidia-smi and the site guides report it (not the share of SMs busy, which NVML
//   does not give; DCGM does).
// Readings outlast short phases: the energy counter and the utilisation are updated by the driver
// every few to 100 ms, so a phase of a few milliseconds reads as the counter's granularity.

#include "miniapp/core/energy_reading.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace miniapp::nvml {

using Reading = EnergyReading;

// The NVML entry points this uses, resolved from the loaded library.
struct Api;

class Library {
 public:
  // Loads NVML from `path` (default: the driver's soname) and initialises it. Never throws:
  // a library that cannot be loaded or initialised gives available() == false and the reason.
  static Library load(const std::string& path = "libnvidia-ml.so.1");

  Library(Library&&) noexcept;
  Library& operator=(Library&&) noexcept;
  ~Library();  // nvmlShutdown and dlclose

  bool available() const { return api_ != nullptr; }
  const std::string& reason() const { return reason_; }
  const Api* api() const { return api_.get(); }

 private:
  Library() = default;
  void close();
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::string reason_;
};

// Reads one device; the Library must outlive it.
class Recorder {
 public:
  // device: a PCI bus id ("0000:65:00.0", as GpuInfo::pci_bus_id) or an NVML index ("0").
  Recorder(const Library& library, std::string device,
           std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~Recorder();  // stops the sampler if stop() was not called
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void start();
  Reading stop();

 private:
  void sample();

  const Api* api_ = nullptr;
  void* device_ = nullptr;
  std::string unavailable_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point started_;
  std::optional<unsigned long long> energy_start_mJ_;
  std::string energy_unavailable_;
  std::vector<unsigned> utilization_;
  std::vector<unsigned> power_mW_;
  std::string utilization_unavailable_;
  std::atomic<bool> running_{false};
  std::thread sampler_;
};

// The recorder the harness runs around the timed repetitions of a device-space measurement:
// NVML loaded once per process (from $MINIAPP_NVML_LIBRARY if set, else the driver's soname) on
// the GPU Kokkos runs on (its PCI bus id; NVML index 0 where no GPU backend is compiled in).
// Never null: without NVML its readings are null with the reason.
std::unique_ptr<Recorder> recorder_for_this_process();

}  // namespace miniapp::nvml
