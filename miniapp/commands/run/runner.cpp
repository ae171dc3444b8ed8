#include "miniapp/commands/run/runner.hpp"

#include "miniapp/core/clock.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/core/stats.hpp"
#include "miniapp/record/console.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace miniapp {

std::string describe_measurement(const MeasurementSpec& m) {
  std::ostringstream s;
  s << m.case_name << " " << m.variant << " " << to_string(m.precision) << " size " << m.size << " on " << m.space
    << " / " << to_string(m.policy);
  if (m.generate == Generation::Device) s << " / generated on device";
  return s.str();
}

namespace {
RankSpread spread_of_medians(const PhaseSamples& t) {
  std::vector<double> low = {summarize(t.compute).median, summarize(t.total).median}, high = low, sum = low;
  ranks::min_in_place(low);
  ranks::max_in_place(high);
  ranks::sum_in_place(sum);
  RankSpread s;
  s.ranks = ranks::count();
  s.compute = {low[0], sum[0] / s.ranks, high[0]};
  s.total = {low[1], sum[1] / s.ranks, high[1]};
  return s;
}
}  // namespace

Measurement combine_over_ranks(Measurement m) {
  if (ranks::count() == 1) return m;
  PhaseSamples& t = m.seconds;
  m.rank_spread = spread_of_medians(t);
  // Every rank has samples of communicate, or none does (the same kernel on every rank).
  for (std::vector<double>* samples : {&t.to_device, &t.compute, &t.to_host, &t.total, &t.communicate})
    ranks::max_in_place(*samples);
  std::vector<double> once = {t.generate, t.setup_to_device, t.final_to_host};
  ranks::max_in_place(once);
  t.generate = once[0], t.setup_to_device = once[1], t.final_to_host = once[2];
  std::vector<double> sums = {m.work.flops,
                              m.work.bytes_read,
                              m.work.bytes_written,
                              static_cast<double>(m.bytes_to_device_per_iteration),
                              static_cast<double>(m.bytes_to_host_per_iteration),
                              static_cast<double>(m.bytes_one_time)};
  ranks::sum_in_place(sums);
  m.work = {sums[0], sums[1], sums[2]};
  m.bytes_to_device_per_iteration = static_cast<std::size_t>(sums[3]);
  m.bytes_to_host_per_iteration = static_cast<std::size_t>(sums[4]);
  m.bytes_one_time = static_cast<std::size_t>(sums[5]);

  Verification& v = m.verification;
  std::vector<double> errors = {v.max_abs_error, v.max_rel_error};
  ranks::max_in_place(errors);
  v.max_abs_error = errors[0], v.max_rel_error = errors[1];
  // The lowest rank whose part failed tells why; with none, rank 0's detail stands for all.
  const bool failed = v.checked && !v.passed;
  const int first_failed = -ranks::max(failed ? -ranks::rank() : -ranks::count());
  const std::string parts = std::to_string(ranks::count()) + " ranks, each checking its own part; ";
  if (first_failed < ranks::count()) {
    v.passed = false;
    v.detail = parts + "rank " + std::to_string(first_failed) + ": " + ranks::broadcast(v.detail, first_failed);
  } else {
    v.detail = parts + "rank 0: " + ranks::broadcast(v.detail, 0);
  }
  return m;
}

namespace {
// Throws the failure of the lowest rank that has one, on every rank ("rank N: ..." under MPI); a
// collective. With one rank: throws the local failure, if any.
void throw_first_failure(const std::string& local_failure) {
  const int first_failed = -ranks::max(local_failure.empty() ? -ranks::count() : -ranks::rank());
  if (first_failed == ranks::count()) return;
  const std::string why = ranks::broadcast(local_failure, first_failed);
  throw std::runtime_error(ranks::count() == 1 ? why : "rank " + std::to_string(first_failed) + ": " + why);
}

// Ends the run on every rank when any rank received a signal or failed: every rank calls this at
// the same points, so none is left waiting in a collective.
void stop_if_any_rank(const std::string& local_failure) {
  if (const int signal = ranks::max(pending_signal())) throw Interrupted(signal);
  throw_first_failure(local_failure);
}

// One measurement on every rank, combined. A rank that stopped inside it (a signal, an error)
// ends it on all; one that finished while a signal arrived keeps it, as a single process does,
// and the run stops before the next.
Measurement measure_on_every_rank(const MeasureFunction& measure, const MeasurementSpec& spec) {
  if (ranks::count() == 1) return measure(spec);
  Measurement m;
  bool interrupted = false;
  std::string failure;
  try {
    m = measure(spec);
  } catch (const Interrupted&) {
    interrupted = true;
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (ranks::any(interrupted)) throw Interrupted(std::max(ranks::max(pending_signal()), 1));
  throw_first_failure(failure);
  return combine_over_ranks(std::move(m));
}

void report_interrupt(const Interrupted& e, RunRecord& record, int& code) {
  record.status = "interrupted";
  record.error = e.what();
  code = exit_code::kInterruptedBase + e.signal_number;
  if (!ranks::is_root()) return;
  std::cerr << "stopped by signal " << e.signal_number << " after " << record.measurements.size() << " of "
            << record.planned << " measurements; finished results are kept\n";
}
}  // namespace

int run_plan(const std::vector<MeasurementSpec>& plan, RunRecord& record, const MeasureFunction& measure,
             const SaveFunction& save, bool quiet) {
  record.planned = plan.size();
  const auto started = std::chrono::steady_clock::now();
  int code = exit_code::kAllVerified;
  // Only rank 0 writes and prints; a failed save is shared with every rank before the next
  // measurement, so none waits for a rank that stopped.
  const bool root = ranks::is_root();
  quiet = quiet || !root;
  std::string save_failure;
  auto save_now = [&] {
    if (!root) return;
    try {
      save(record);
    } catch (const std::exception& e) {
      save_failure = e.what();
    }
  };
  try {
    save_now();
    for (std::size_t k = 0; k < plan.size(); ++k) {
      stop_if_any_rank(save_failure);
      const MeasurementSpec& spec = plan[k];
      if (!quiet) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::cerr << "[" << k + 1 << "/" << plan.size() << "] " << describe_measurement(spec);
        if (k > 0)
          std::cerr << "  (ETA " << std::fixed << std::setprecision(0) << elapsed / k * (plan.size() - k) << " s)"
                    << std::defaultfloat;
        std::cerr << "\n";
      }
      record.measurements.push_back(measure_on_every_rank(measure, spec));
      const Verification& v = record.measurements.back().verification;
      if (v.checked && !v.passed) {
        code = exit_code::kVerificationFailed;
        if (root) std::cerr << "VERIFICATION FAILED: " << describe_measurement(spec) << ": " << v.detail << "\n";
      }
      save_now();
      const bool case_done = k + 1 == plan.size() || plan[k + 1].case_index != spec.case_index;
      if (case_done && !quiet) print_case_table(std::cout, record, spec.case_index);
    }
    // A signal during the last verification or save is acted on here, not lost.
    stop_if_any_rank(save_failure);
    record.status = "complete";
  } catch (const Interrupted& e) {
    report_interrupt(e, record, code);
  } catch (const std::exception& e) {
    record.status = "failed";
    record.error = e.what();
    code = exit_code::kRuntimeError;
    if (root) std::cerr << "error: " << e.what() << "\n";
  }
  record.provenance.finished = now_iso8601();
  if (!root) return code;
  try {
    save(record);
    if (record.status == "complete" && interrupt_requested()) {
      // The signal came while the final results were written: they said complete, the job did not.
      report_interrupt(Interrupted(pending_signal()), record, code);
      save(record);
    }
  } catch (const std::exception& e) {
    if (record.error != e.what()) std::cerr << "error: " << e.what() << "\n";
    return exit_code::kRuntimeError;
  }
  return code;
}

}  // namespace miniapp
