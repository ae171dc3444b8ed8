#include "miniapp/record/record.hpp"

#include "miniapp/core/stats.hpp"

#include <algorithm>
#include <cmath>

namespace miniapp {

Rates rates(const Measurement& m) {
  Rates r;
  const Summary total = summarize(m.seconds.total);
  const Summary compute = summarize(m.seconds.compute);
  r.seconds_per_iteration = total.median;
  if (compute.median > 0) {
    r.gflops = m.work.flops / compute.median * 1e-9;
    r.gbytes_per_s = (m.work.bytes_read + m.work.bytes_written) / compute.median * 1e-9;
  }
  const double transfer_seconds = summarize(m.seconds.to_device).median + summarize(m.seconds.to_host).median;
  const double moved = static_cast<double>(m.bytes_to_device_per_iteration + m.bytes_to_host_per_iteration);
  if (transfer_seconds > 0 && moved > 0) r.transfer_gbytes_per_s = moved / transfer_seconds * 1e-9;
  return r;
}

std::optional<calibration::RooflinePlace> roofline(const RunRecord& run, const Measurement& m) {
  if (!run.calibration) return std::nullopt;
  const calibration::SpaceCalibration* c = run.calibration->find(m.spec.space);
  if (!c) return std::nullopt;
  return calibration::place(*c, m.spec.precision, m.work, summarize(m.seconds.compute).median);
}

namespace {
const Measurement* find_baseline(const RunRecord& run, const Measurement& m, MirrorPolicy policy) {
  const std::string& baseline = run.deck->cases[m.spec.case_index].baseline;
  for (const Measurement& b : run.measurements)
    if (b.spec.case_index == m.spec.case_index && b.spec.variant == m.spec.variant &&
        b.spec.precision == m.spec.precision && b.spec.size == m.spec.size && b.spec.space == baseline &&
        b.spec.policy == policy && b.spec.generate == m.spec.generate)
      return &b;
  return nullptr;
}
}  // namespace

double speedup(const RunRecord& run, const Measurement& m) {
  if (!run.deck) return 0;
  const Measurement* b = find_baseline(run, m, m.spec.policy);
  if (!b) b = find_baseline(run, m, MirrorPolicy::Host);
  const double mine = rates(m).seconds_per_iteration;
  if (!b || mine <= 0) return 0;
  return rates(*b).seconds_per_iteration / mine;
}

std::optional<Difference> difference_from_baseline(const RunRecord& run, const Measurement& m) {
  if (!run.deck) return std::nullopt;
  const std::string& baseline = run.deck->cases[m.spec.case_index].baseline;
  for (const Measurement& b : run.measurements) {
    if (b.spec.case_index != m.spec.case_index || b.spec.variant != m.spec.variant ||
        b.spec.precision != m.spec.precision || b.spec.size != m.spec.size || b.spec.space != baseline ||
        b.spec.generate != m.spec.generate || b.output_sample.size() != m.output_sample.size())
      continue;
    Difference d;
    double scale = 0;
    for (std::size_t i = 0; i < b.output_sample.size(); ++i) {
      scale = std::max(scale, std::abs(b.output_sample[i]));
      const double diff = std::abs(m.output_sample[i] - b.output_sample[i]);
      d.max_abs = std::max(d.max_abs, std::isnan(diff) ? INFINITY : diff);
    }
    d.max_rel = scale > 0 ? d.max_abs / scale : d.max_abs;
    return d;
  }
  return std::nullopt;
}

}  // namespace miniapp
