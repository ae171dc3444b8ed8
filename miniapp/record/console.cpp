#include "miniapp/record/console.hpp"

#include "miniapp/core/stats.hpp"
#include "miniapp/core/workload.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>

namespace miniapp {

namespace {
std::string milliseconds(double seconds, bool present) {
  if (!present) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(seconds * 1e3 < 10 ? 3 : 1) << seconds * 1e3;
  return s.str();
}
}  // namespace

void print_case_table(std::ostream& os, const RunRecord& run, std::size_t case_index) {
  const CaseSpec& c = run.deck->cases[case_index];
  const Workload* w = find_workload(c.workload);
  os << "\n== case " << c.name << ": " << c.workload << " (size = " << (w ? w->size_meaning() : "?")
     << "), baseline " << c.baseline << ", median of " << c.repetitions << " repetitions ==\n";
  int variant_width = 10;
  for (const std::string& v : c.variants) variant_width = std::max(variant_width, static_cast<int>(v.size()) + 2);
  os << std::left << std::setw(variant_width) << "variant" << std::setw(10) << "precision" << std::right << std::setw(9) << "size"
     << "  " << std::left << std::setw(8) << "space" << std::setw(22) << "policy" << std::setw(8) << "inputs"
     << std::right << std::setw(11) << "gen ms" << std::setw(11) << "h2d ms" << std::setw(11) << "compute ms" << std::setw(11) << "d2h ms" << std::setw(11) << "total ms"
     << std::setw(9) << "GFLOP/s" << std::setw(8) << "GB/s" << std::setw(7) << "roof" << std::setw(9) << "speedup" << std::setw(10)
     << "vs base" << "  verified\n";
  for (const Measurement& m : run.measurements) {
    if (m.spec.case_index != case_index) continue;
    const Rates r = rates(m);
    const bool h2d = m.bytes_to_device_per_iteration > 0, d2h = m.bytes_to_host_per_iteration > 0;
    const double s = speedup(run, m);
    std::ostringstream sp;
    if (s > 0) sp << std::fixed << std::setprecision(2) << s << "x";
    else sp << "-";
    std::ostringstream vs;
    if (const auto d = difference_from_baseline(run, m)) vs << std::scientific << std::setprecision(1) << d->max_rel;
    else vs << "-";
    std::ostringstream roof;
    if (const auto place = roofline(run, m)) roof << std::fixed << std::setprecision(0) << place->fraction * 100 << "%";
    else roof << "-";
    const Verification& v = m.verification;
    std::ostringstream ver;
    if (!v.checked) ver << "unchecked";
    else ver << (v.passed ? "pass" : "FAIL") << " (" << std::scientific << std::setprecision(1) << v.max_rel_error
             << ")";
    os << std::left << std::setw(variant_width) << m.spec.variant << std::setw(10) << to_string(m.spec.precision) << std::right
       << std::setw(9) << m.spec.size << "  " << std::left << std::setw(8) << m.spec.space << std::setw(22)
       << to_string(m.spec.policy) << std::setw(8)
       << (m.spec.generate == Generation::Host ? "host" : "device") << std::right << std::setw(11)
       << milliseconds(m.seconds.generate, true) << std::setw(11)
       << milliseconds(summarize(m.seconds.to_device).median, h2d) << std::setw(11)
       << milliseconds(summarize(m.seconds.compute).median, true) << std::setw(11)
       << milliseconds(summarize(m.seconds.to_host).median, d2h) << std::setw(11)
       << milliseconds(r.seconds_per_iteration, true) << std::setw(9) << std::fixed << std::setprecision(2)
       << r.gflops << std::setw(8) << std::setprecision(2) << r.gbytes_per_s << std::setw(7) << roof.str() << std::setw(9) << sp.str() << std::setw(10)
       << vs.str() << "  " << ver.str() << std::defaultfloat << '\n';
    if (v.checked && !v.passed) os << "    verification failed: " << v.detail << '\n';
  }
  const bool host_only = [&] {
    for (const std::string& s : c.spaces)
      if (!is_host_space_name(s)) return false;
    return true;
  }();
  if (host_only && c.policies.size() > 1)
    os << "  (host spaces: a mirror is the same allocation, so the copy policies move no data)\n";
  if (run.calibration)
    os << "  (roof: GFLOP/s as a share of the space's calibrated bound at the kernel's flops per byte, "
          "min(GEMM rate, stream bandwidth x intensity))\n";
}

}  // namespace miniapp
