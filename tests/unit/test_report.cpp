#include "miniapp/record/console.hpp"
#include "miniapp/record/writers.hpp"
#include "miniapp/record/provenance.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/clock.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

using namespace miniapp;

namespace {

Measurement measurement(const std::string& space, MirrorPolicy policy, std::vector<double> sample) {
  Measurement m;
  m.spec.case_index = 0;
  m.spec.variant = "direct";
  m.spec.size = 10;
  m.spec.space = space;
  m.spec.policy = policy;
  m.seconds.total = {1.0};
  m.output_sample = std::move(sample);
  return m;
}

// One case whose baseline space is serial.
struct SerialBaselineRun {
  Deck deck;
  RunRecord run;
  SerialBaselineRun() {
    deck.cases.emplace_back();
    deck.cases[0].baseline = "serial";
    run.deck = &deck;
  }
};

}  // namespace

TEST(Report, DifferenceFromBaselineIsTheLargestSampledDifference) {
  SerialBaselineRun r;
  RunRecord& run = r.run;
  run.measurements.push_back(measurement("serial", MirrorPolicy::Host, {1.0, -4.0, 2.0}));
  run.measurements.push_back(measurement("openmp", MirrorPolicy::AllResident, {1.0, -4.0, 2.5}));

  const auto self = difference_from_baseline(run, run.measurements[0]);
  ASSERT_TRUE(self);
  EXPECT_EQ(self->max_abs, 0.0);
  const auto other = difference_from_baseline(run, run.measurements[1]);
  ASSERT_TRUE(other);
  EXPECT_DOUBLE_EQ(other->max_abs, 0.5);
  EXPECT_DOUBLE_EQ(other->max_rel, 0.5 / 4.0);  // relative to the baseline's largest magnitude
}

TEST(Report, NoDifferenceWithoutABaselineResult) {
  SerialBaselineRun r;
  RunRecord& run = r.run;
  run.measurements.push_back(measurement("openmp", MirrorPolicy::Host, {1.0}));
  EXPECT_FALSE(difference_from_baseline(run, run.measurements[0]));
  Measurement other_size = measurement("serial", MirrorPolicy::Host, {1.0});
  other_size.spec.size = 20;
  run.measurements.push_back(other_size);
  EXPECT_FALSE(difference_from_baseline(run, run.measurements[0])) << "a different size is not a baseline";
}

// results.json: a device-space measurement carries the GPU's energy (null fields with NVML's
// reason); a host-space one has gpu_energy null.
TEST(Report, GpuEnergyIsWrittenWithNullsAndTheReason) {
  SerialBaselineRun r;
  RunRecord& run = r.run;
  run.measurements.push_back(measurement("serial", MirrorPolicy::Host, {1.0}));
  Measurement device = measurement("cuda", MirrorPolicy::AllResident, {1.0});
  device.gpu_energy = EnergyReading{};
  device.gpu_energy->energy_joules = 3.5;
  device.gpu_energy->gpu_utilization_percent = 40.0;
  device.gpu_energy->seconds = 0.25;
  device.gpu_energy->samples = 7;
  device.gpu_energy->unavailable = "power: not supported";
  run.measurements.push_back(device);

  const YAML::Node doc = YAML::Load(to_json(run));
  const YAML::Node host = doc["measurements"][0]["gpu_energy"];
  ASSERT_TRUE(host.IsDefined());
  EXPECT_TRUE(host.IsNull());
  const YAML::Node e = doc["measurements"][1]["gpu_energy"];
  ASSERT_TRUE(e.IsMap());
  EXPECT_DOUBLE_EQ(e["energy_joules"].as<double>(), 3.5);
  EXPECT_TRUE(e["mean_power_watts"].IsNull());
  EXPECT_DOUBLE_EQ(e["gpu_utilization_percent"].as<double>(), 40.0);
  EXPECT_DOUBLE_EQ(e["seconds"].as<double>(), 0.25);
  EXPECT_EQ(e["samples"].as<int>(), 7);
  EXPECT_EQ(e["unavailable"].as<std::string>(), "power: not supported");
}
