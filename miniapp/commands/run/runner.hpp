#pragma once
// The run loop: measures a plan in order, saves the results after every measurement, and turns
// failed verifications, errors and signals into the documented exit codes (exit_codes.hpp).

#include "miniapp/core/measurement.hpp"
#include "miniapp/record/record.hpp"

#include <functional>
#include <string>
#include <vector>

namespace miniapp {

// "case variant precision size N on space / policy", as progress lines and errors name a measurement.
std::string describe_measurement(const MeasurementSpec& m);

using MeasureFunction = std::function<Measurement(const MeasurementSpec&)>;
using SaveFunction = std::function<void(const RunRecord&)>;

// Runs every measurement of the plan into record.measurements, calling save after each and once
// at the end. The run's status is "complete" only when every measurement ran and no signal
// arrived at any point, verification and saving included; a signal ends it "interrupted" with
// 128+N, a failed save "failed" with 3 (the previous files stay as they were). Progress goes to
// stderr and each case's table to stdout unless quiet. record.deck must be set.
// One measurement of every rank (core/ranks.hpp) as one of the whole problem: each phase's time the
// slowest rank's, work and bytes moved summed, verification passed only where every rank's part
// passed (the first failing rank's detail). A collective: every rank calls it. One rank: m itself.
Measurement combine_over_ranks(Measurement m);

// Under MPI every rank runs the plan, each measuring its part; rank 0 alone saves and prints, and a
// signal or an error on any rank ends the run on all of them between measurements.
int run_plan(const std::vector<MeasurementSpec>& plan, RunRecord& record, const MeasureFunction& measure,
             const SaveFunction& save, bool quiet);

}  // namespace miniapp
