#pragma once
// What the NVML recorder (nvml.hpp) reads around a measurement; kept apart so that a Measurement
// can hold one without the recorder's threads and library handles.
#include <optional>
#include <string>

namespace miniapp {

struct EnergyReading {
  std::optional<double> energy_joules;
  std::optional<double> mean_power_watts;
  std::optional<double> gpu_utilization_percent;
  double seconds = 0;            // between start() and stop()
  int samples = 0;               // utilisation (and power) samples taken
  std::string unavailable;       // why a field is null; empty when all are set
};

}  // namespace miniapp
