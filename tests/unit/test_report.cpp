#include "miniapp/core/report.hpp"

#include <gtest/gtest.h>

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
