#include "miniapp/core/report.hpp"

#include "miniapp/core/build_info.hpp"
#include "miniapp/core/json_writer.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

extern char** environ;

#ifndef MINIAPP_VERSION
#define MINIAPP_VERSION "0.1.0"
#endif

namespace miniapp {

namespace {
std::string format_now(const char* format, bool utc) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  if (utc) gmtime_r(&t, &tm);
  else localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}
}  // namespace

std::string now_iso8601() { return format_now("%Y-%m-%dT%H:%M:%SZ", true); }

std::string local_timestamp() { return format_now("%Y%m%d-%H%M%S", false); }

namespace {
bool recorded_variable(const std::string& name) {
  for (const char* prefix : {"OMP_", "KOKKOS_", "SLURM_", "GOMP_", "OPENBLAS_"})
    if (name.rfind(prefix, 0) == 0) return true;
  return name == "CUDA_VISIBLE_DEVICES" || name == "HIP_VISIBLE_DEVICES" || name == "ROCR_VISIBLE_DEVICES" ||
         name == "GPU_DEVICE_ORDINAL";  // Slurm's GPU index of the job on the node
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}
}  // namespace

Provenance collect_provenance(int argc, char** argv) {
  Provenance p;
  for (int i = 0; i < argc; ++i) p.command_line.emplace_back(argv[i]);
  p.miniapp_version = MINIAPP_VERSION;
  p.git_commit = git_commit();
#if defined(__clang__)
  p.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  p.compiler = "g++ " __VERSION__;
#else
  p.compiler = "unknown";
#endif
#ifdef MINIAPP_HOST_ARCH
  p.compiler += " -march=" MINIAPP_HOST_ARCH;
#endif
  p.kokkos_version = compat::kokkos_version();
  p.kokkos_kernels_version = compat::kokkos_kernels_version();
  if (Kokkos::is_initialized()) {
    std::ostringstream config;
    Kokkos::print_configuration(config, false);
    p.kokkos_configuration = config.str();
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.hostname = host;
  p.cpu_model = cpu_model();
  p.spaces_compiled = compiled_space_names();
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos && recorded_variable(kv.substr(0, eq))) p.environment[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (Kokkos::is_initialized()) p.gpu = gpu_in_use(p.command_line);
  p.started = now_iso8601();
  return p;
}

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
}  // namespace

std::string to_json(const RunRecord& run) {
  JsonWriter j;
  j.begin_object();
  j.field("schema", "kokkos-miniapp-results/1");
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
  j.key("measurements").begin_array();
  for (const Measurement& m : run.measurements) {
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
      j.field("bandwidth_GBps", place->bandwidth_GBps).field("peak_GFLOPs", place->peak_GFLOPs);
      j.end_object();
    } else {
      j.null();
    }
    // Device spaces: the GPU's energy over the timed repetitions (null fields: NVML's reason).
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

namespace {
// Every byte of content to fd, or the error (EINTR retried, short writes continued).
int write_all(int fd, const std::string& content) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}
}  // namespace

WriteError::WriteError(const std::string& path, const std::string& what, int error_number)
    : std::runtime_error("cannot write " + path + ": " + what + ": " + std::strerror(error_number)), path(path) {}

void write_atomically(const std::string& path, const std::string& content) {
  // Per process: two processes writing one file (jobs sharing a machine-wide calibration cache)
  // never write into each other's temporary file; the last rename wins, whole.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(path, "creating " + tmp, errno);
  // The new content is on disk (fsync) before it replaces the old file, so a crash or a full disk
  // leaves either the previous complete file or the new one, never a truncated one.
  int error = write_all(fd, content);
  std::string step = "writing " + tmp;
  if (error == 0 && ::fsync(fd) != 0) error = errno, step = "flushing " + tmp;
  if (::close(fd) != 0 && error == 0) error = errno, step = "closing " + tmp;
  if (error == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) error = errno, step = "renaming " + tmp;
  if (error != 0) {
    ::unlink(tmp.c_str());
    throw WriteError(path, step, error);
  }
  // The rename itself is durable once the directory is flushed.
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) throw WriteError(path, "opening directory " + dir, errno);
  error = ::fsync(dir_fd) != 0 ? errno : 0;
  ::close(dir_fd);
  if (error != 0 && error != EINVAL) throw WriteError(path, "flushing directory " + dir, error);
}

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
