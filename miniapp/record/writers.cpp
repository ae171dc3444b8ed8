#include "miniapp/record/writers.hpp"

#include "miniapp/core/json_writer.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/stats.hpp"
#include "miniapp/core/workload.hpp"
#include "miniapp/record/schema.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace miniapp {

namespace {
void write_summary(JsonWriter& j, const std::string& name, const std::vector<double>& samples) {
  const Summary s = summarize(samples);
  j.key(name).begin_object();
  j.field("min", s.min).field("median", s.median).field("mean", s.mean).field("stddev", s.stddev);
  j.array("samples", samples);
  j.end_object();
}

void write_provenance(JsonWriter& j, const Provenance& p) {
  j.key("provenance").begin_object();
  j.array("command_line", p.command_line);
  j.field("miniapp_version", p.miniapp_version).field("git_commit", p.git_commit).field("compiler", p.compiler);
  j.field("kokkos_version", p.kokkos_version).field("kokkos_kernels_version", p.kokkos_kernels_version);
  j.array("spaces_compiled", p.spaces_compiled);
  j.field("kokkos_configuration", p.kokkos_configuration);
  j.field("hostname", p.hostname).field("cpu_model", p.cpu_model);
  j.key("environment").begin_object();
  for (const auto& [k, v] : p.environment) j.field(k, v);
  j.end_object();
  j.field("host_threads", p.host_threads).field("host_threads_source", p.host_threads_source);
  j.field("cpus_allowed", p.cpus_allowed);
  j.key("gpu");
  if (p.gpu) {
    j.begin_object();
    j.field("space", p.gpu->space).field("device_id", p.gpu->device_id).field("name", p.gpu->name);
    j.field("pci_bus_id", p.gpu->pci_bus_id).field("total_memory", static_cast<std::uint64_t>(p.gpu->total_memory));
    j.field("visible_devices", p.gpu->visible_devices).field("selected_by", p.gpu->selected_by);
    j.end_object();
  } else {
    j.null();
  }
  j.field("started", p.started).field("finished", p.finished);
  // Where each process ran: one entry without MPI, one per rank with it.
  j.field("launcher", p.launcher);
  j.key("ranks").begin_array();
  for (const RankPlace& r : p.ranks) {
    j.begin_object();
    j.field("rank", r.rank).field("local_rank", r.local_rank).field("hostname", r.hostname).field("cpus", r.cpus);
    j.field("host_threads", r.host_threads).field("gpu_device", r.gpu_device);
    j.field("visible_devices", r.visible_devices);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_deck(JsonWriter& j, const Deck& deck) {
  j.key("deck").begin_object();
  j.field("file", deck.file).field("title", deck.title).field("text", deck.text);
  j.key("cases").begin_array();
  for (const CaseSpec& c : deck.cases) {
    j.begin_object();
    j.field("name", c.name).field("workload", c.workload).array("variants", c.variants);
    j.key("sizes").begin_array();
    for (std::size_t s : c.sizes) j.value(static_cast<std::uint64_t>(s));
    j.end_array();
    j.key("precisions").begin_array();
    for (Precision p : c.precisions) j.value(to_string(p));
    j.end_array();
    j.array("spaces", c.spaces).field("baseline", c.baseline);
    j.key("policies").begin_array();
    for (MirrorPolicy p : c.policies) j.value(std::string(to_string(p)));
    j.end_array();
    j.key("generate").begin_array();
    for (Generation g : c.generate) j.value(to_string(g));
    j.end_array();
    // The workload's own parameters, defaults filled in.
    j.key("parameters").begin_object();
    if (const Workload* w = find_workload(c.workload))
      for (const auto& [key, value] : w->describe(c.params)) j.field(key, value);
    j.end_object();
    j.field("warmup", c.warmup).field("repetitions", c.repetitions).field("seed", static_cast<std::uint64_t>(c.seed));
    j.field("verify", c.verify);
    j.field("tolerance", c.tolerance);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}
// Device spaces: the GPU's energy over the timed repetitions (null fields: NVML's reason).
void write_gpu_energy(JsonWriter& j, const Measurement& m) {
  j.key("gpu_energy");
  if (const auto& e = m.gpu_energy) {
    j.begin_object();
    j.field("energy_joules", e->energy_joules).field("mean_power_watts", e->mean_power_watts);
    j.field("gpu_utilization_percent", e->gpu_utilization_percent);
    j.field("seconds", e->seconds).field("samples", e->samples);
    j.key("unavailable");
    if (e->unavailable.empty()) j.null();
    else j.value(e->unavailable);
    j.end_object();
  } else {
    j.null();
  }
}

// Under MPI: the spread of the ranks' median seconds per iteration; null with one rank.
void write_rank_spread(JsonWriter& j, const Measurement& m) {
  j.key("ranks");
  if (!m.rank_spread) {
    j.null();
    return;
  }
  j.begin_object();
  j.field("count", m.rank_spread->ranks);
  j.key("median_seconds").begin_object();
  for (const auto& [name, range] : {std::make_pair("compute", m.rank_spread->compute),
                                    std::make_pair("total", m.rank_spread->total)}) {
    j.key(name).begin_object();
    j.field("min", range.min).field("mean", range.mean).field("max", range.max);
    j.end_object();
  }
  j.end_object();
  j.end_object();
}

void write_measurement(JsonWriter& j, const RunRecord& run, const Measurement& m) {
  const Rates r = rates(m);
  j.begin_object();
  j.field("case", m.spec.case_name).field("case_index", static_cast<std::uint64_t>(m.spec.case_index));
  j.field("workload", m.spec.workload).field("variant", m.spec.variant);
  j.field("size", static_cast<std::uint64_t>(m.spec.size)).field("precision", to_string(m.spec.precision));
  j.field("space", m.spec.space).field("policy", std::string(to_string(m.spec.policy)));
  j.field("generate", to_string(m.spec.generate));
  j.field("warmup", m.spec.warmup).field("repetitions", m.spec.repetitions);
  j.field("seed", static_cast<std::uint64_t>(m.spec.seed));
  j.key("seconds").begin_object();
  write_summary(j, "to_device", m.seconds.to_device);
  write_summary(j, "compute", m.seconds.compute);
  write_summary(j, "to_host", m.seconds.to_host);
  write_summary(j, "total", m.seconds.total);
  if (!m.seconds.communicate.empty()) write_summary(j, "communicate", m.seconds.communicate);
  j.field("generate", m.seconds.generate);
  j.field("setup_to_device", m.seconds.setup_to_device).field("final_to_host", m.seconds.final_to_host);
  j.end_object();
  j.key("transfers").begin_object();
  j.field("mirrors_alias", m.mirrors_alias);
  j.field("host_mirrors", m.host_mirrors);
  j.field("bytes_to_device_per_iteration", static_cast<std::uint64_t>(m.bytes_to_device_per_iteration));
  j.field("bytes_to_host_per_iteration", static_cast<std::uint64_t>(m.bytes_to_host_per_iteration));
  j.field("bytes_one_time", static_cast<std::uint64_t>(m.bytes_one_time));
  j.field("bandwidth_GBps", r.transfer_gbytes_per_s);
  j.end_object();
  j.key("work").begin_object();
  j.field("flops", m.work.flops).field("bytes_read", m.work.bytes_read).field("bytes_written", m.work.bytes_written);
  const double bytes = m.work.bytes_read + m.work.bytes_written;
  j.field("arithmetic_intensity", bytes > 0 ? m.work.flops / bytes : 0.0);
  j.field("GFLOPs", r.gflops).field("GBps", r.gbytes_per_s);
  j.end_object();
  j.key("roofline");
  if (const auto place = roofline(run, m)) {
    j.begin_object();
    j.field("arithmetic_intensity", place->intensity).field("bound_GFLOPs", place->bound_GFLOPs);
    j.field("fraction", place->fraction).field("limited_by", place->limited_by);
    j.field("bandwidth_GBps", place->bandwidth_GBps).field("bandwidth_from", place->bandwidth_from);
    j.field("peak_GFLOPs", place->peak_GFLOPs);
    j.end_object();
  } else {
    j.null();
  }
  write_gpu_energy(j, m);
  write_rank_spread(j, m);
  j.field("baseline", run.deck ? run.deck->cases[m.spec.case_index].baseline : std::string());
  const double s = speedup(run, m);
  j.key("speedup");
  if (s > 0) j.value(s);
  else j.null();
  j.key("difference_from_baseline");
  if (const auto d = difference_from_baseline(run, m)) {
    j.begin_object();
    j.field("max_abs", d->max_abs).field("max_rel", d->max_rel);
    j.field("compared_values", static_cast<std::uint64_t>(m.output_sample.size()));
    j.end_object();
  } else {
    j.null();
  }
  const Verification& v = m.verification;
  j.key("verification").begin_object();
  j.field("checked", v.checked).field("passed", v.passed);
  j.field("max_abs_error", v.max_abs_error).field("max_rel_error", v.max_rel_error);
  j.field("tolerance", v.tolerance).field("reference", v.reference).field("detail", v.detail);
  j.end_object();
  j.end_object();
}
}  // namespace

std::string to_json(const RunRecord& run) {
  JsonWriter j;
  j.begin_object();
  j.field("schema", kResultsSchema);
  j.field("status", run.status);
  if (!run.error.empty()) j.field("error", run.error);
  j.field("planned_measurements", static_cast<std::uint64_t>(run.planned));
  j.field("finished_measurements", static_cast<std::uint64_t>(run.measurements.size()));
  write_provenance(j, run.provenance);
  if (run.deck) write_deck(j, *run.deck);
  j.key("calibration");
  if (run.calibration) {
    j.begin_object();
    calibration::write_json(j, *run.calibration);
    j.end_object();
  } else {
    j.null();
    j.field("calibration_skipped", run.calibration_skipped);
  }
  if (run.kernels_fenced) j.field("kernels_fenced", true);
  j.key("measurements").begin_array();
  for (const Measurement& m : run.measurements) write_measurement(j, run, m);
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

std::string to_csv(const RunRecord& run) {
  std::ostringstream os;
  os.precision(9);
  os << "case,workload,variant,precision,size,space,policy,generate,repetition,to_device_s,compute_s,to_host_s,total_s,"
        "verified\n";
  for (const Measurement& m : run.measurements)
    for (std::size_t i = 0; i < m.seconds.total.size(); ++i)
      os << m.spec.case_name << ',' << m.spec.workload << ',' << m.spec.variant << ','
         << to_string(m.spec.precision) << ',' << m.spec.size << ',' << m.spec.space << ','
         << to_string(m.spec.policy) << ',' << to_string(m.spec.generate) << ',' << i << ',' << m.seconds.to_device[i] << ',' << m.seconds.compute[i]
         << ',' << m.seconds.to_host[i] << ',' << m.seconds.total[i] << ','
         << (!m.verification.checked ? "unchecked" : m.verification.passed ? "pass" : "FAIL") << '\n';
  return os.str();
}

std::string to_benchmark_json(const RunRecord& run) {
  JsonWriter j;
  j.begin_object();
  j.key("context").begin_object();
  j.field("date", run.provenance.started).field("host_name", run.provenance.hostname);
  j.field("executable", run.provenance.command_line.empty() ? "" : run.provenance.command_line.front());
  j.field("library_build_type", "release");
  j.end_object();
  j.key("benchmarks").begin_array();
  for (const Measurement& m : run.measurements) {
    const Summary total = summarize(m.seconds.total);
    const std::string name = m.spec.case_name + "/" + m.spec.variant + "/" + to_string(m.spec.precision) + "/" +
                             std::to_string(m.spec.size) + "/" + m.spec.space + "/" +
                             std::string(to_string(m.spec.policy)) +
                             (m.spec.generate == Generation::Device ? "/generated-on-device" : "");
    j.begin_object();
    j.field("name", name).field("run_name", name).field("run_type", "iteration");
    j.field("repetitions", 1).field("repetition_index", 0).field("threads", 1);
    j.field("iterations", static_cast<std::int64_t>(total.count));
    j.field("real_time", total.median * 1e3).field("cpu_time", total.median * 1e3).field("time_unit", "ms");
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

}  // namespace miniapp
