#include "miniapp/commands/run/runner.hpp"

#include "miniapp/core/clock.hpp"
#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/record/console.hpp"

#include <chrono>
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
void report_interrupt(const Interrupted& e, RunRecord& record, int& code) {
  record.status = "interrupted";
  record.error = e.what();
  code = exit_code::kInterruptedBase + e.signal_number;
  std::cerr << "stopped by signal " << e.signal_number << " after " << record.measurements.size() << " of "
            << record.planned << " measurements; finished results are kept\n";
}
}  // namespace

int run_plan(const std::vector<MeasurementSpec>& plan, RunRecord& record, const MeasureFunction& measure,
             const SaveFunction& save, bool quiet) {
  record.planned = plan.size();
  const auto started = std::chrono::steady_clock::now();
  int code = exit_code::kAllVerified;
  try {
    save(record);
    for (std::size_t k = 0; k < plan.size(); ++k) {
      throw_if_interrupted();
      const MeasurementSpec& spec = plan[k];
      if (!quiet) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::cerr << "[" << k + 1 << "/" << plan.size() << "] " << describe_measurement(spec);
        if (k > 0)
          std::cerr << "  (ETA " << std::fixed << std::setprecision(0) << elapsed / k * (plan.size() - k) << " s)"
                    << std::defaultfloat;
        std::cerr << "\n";
      }
      record.measurements.push_back(measure(spec));
      const Verification& v = record.measurements.back().verification;
      if (v.checked && !v.passed) {
        code = exit_code::kVerificationFailed;
        std::cerr << "VERIFICATION FAILED: " << describe_measurement(spec) << ": " << v.detail << "\n";
      }
      save(record);
      const bool case_done = k + 1 == plan.size() || plan[k + 1].case_index != spec.case_index;
      if (case_done && !quiet) print_case_table(std::cout, record, spec.case_index);
    }
    // A signal during the last verification or save is acted on here, not lost.
    throw_if_interrupted();
    record.status = "complete";
  } catch (const Interrupted& e) {
    report_interrupt(e, record, code);
  } catch (const std::exception& e) {
    record.status = "failed";
    record.error = e.what();
    code = exit_code::kRuntimeError;
    std::cerr << "error: " << e.what() << "\n";
  }
  record.provenance.finished = now_iso8601();
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
