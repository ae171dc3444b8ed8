#include "miniapp/calibration/calibration.hpp"

#include "miniapp/calibration/probe.hpp"
#include "miniapp/core/memory.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/clock.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace fs = std::filesystem;

namespace miniapp::calibration {

namespace {
constexpr const char* kSchema = "kokkos-miniapp-calibration/1";

// Halves `values` until `arrays` of them take at most an eighth of `available` bytes.
std::size_t fit(std::size_t values, int arrays, std::optional<std::size_t> available, std::size_t smallest) {
  if (!available) return values;
  while (values > smallest && static_cast<double>(values) * sizeof(double) * arrays > *available / 8.0) values /= 2;
  return values;
}
}  // namespace

ProbeSizes default_sizes(bool host_space) {
  ProbeSizes s;
  if (host_space) {
    // 3 x 128 MiB: above the largest L3 of a socket in common use (AMD's 3D V-Cache parts excepted,
    // which the bandwidth then overstates; the JSON names the array size).
    s.stream_values = fit(std::size_t{1} << 24, 3, available_host_memory(), std::size_t{1} << 20);
    s.gemm_max_n = 2048;
  } else {
    // 3 x 512 MiB, ten times an H100's L2; the link copies 256 MiB each way.
    s.stream_values = std::size_t{1} << 26;
    s.gemm_max_n = 8192;
    s.link_bytes = std::size_t{256} << 20;
  }
  return s;
}

bool Key::operator==(const Key& o) const {
  return git_commit == o.git_commit && hostname == o.hostname && cpu_model == o.cpu_model &&
         kokkos_version == o.kokkos_version && gpu_pci_bus_id == o.gpu_pci_bus_id && host_threads == o.host_threads &&
         cpus_allowed == o.cpus_allowed;
}

const SpaceCalibration* Calibration::find(const std::string& space) const {
  for (const SpaceCalibration& s : spaces)
    if (s.space == space) return &s;
  return nullptr;
}

SpaceCalibration probe(const std::string& space, const ProbeSizes& sizes) {
  std::optional<SpaceCalibration> result;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (space_name<Space>() != space) return;
    ProbeSizes s = sizes;
    if constexpr (!is_host_space<Space>())
      if (const auto free = available_device_memory(space))
        s.stream_values = std::min(s.stream_values, std::max<std::size_t>(1, *free / 8 / 3 / sizeof(double)));
    result = Prober<Space>(Space(), s).run();
  });
  if (!result) throw std::invalid_argument("calibration: '" + space + "' is not compiled into this binary");
  result->measured_at = now_iso8601();
  return *result;
}

namespace {
void write_key(JsonWriter& j, const Key& k) {
  j.key("key").begin_object();
  j.field("git_commit", k.git_commit).field("hostname", k.hostname).field("cpu_model", k.cpu_model);
  j.field("kokkos_version", k.kokkos_version).field("gpu_pci_bus_id", k.gpu_pci_bus_id);
  j.field("host_threads", k.host_threads).field("cpus_allowed", k.cpus_allowed);
  j.end_object();
}

void write_space(JsonWriter& j, const SpaceCalibration& s) {
  j.key(s.space).begin_object();
  j.field("host", s.host);
  j.key("bandwidth_GBps").begin_object().field("copy", s.copy_GBps).field("triad", s.triad_GBps);
  j.field("vendor_copy", s.vendor_copy_GBps).end_object();
  j.field("stream_bytes_per_array", static_cast<std::uint64_t>(s.stream_bytes));
  j.key("gemm_GFLOPs").begin_object();
  for (const auto& [precision, rate] : s.gemm_GFLOPs) j.field(precision, rate);
  j.end_object();
  j.key("gemm_n").begin_object();
  for (const auto& [precision, n] : s.gemm_n) j.field(precision, n);
  j.end_object();
  j.field("launch_latency_us", s.launch_latency_us);
  j.key("link_GBps");
  if (s.link) {
    j.begin_object();
    j.field("pageable_to_device", s.link->pageable_to_device).field("pageable_to_host", s.link->pageable_to_host);
    j.field("pinned_to_device", s.link->pinned_to_device).field("pinned_to_host", s.link->pinned_to_host);
    j.end_object();
  } else {
    j.null();
  }
  j.field("seconds", s.seconds).field("measured_at", s.measured_at).field("verified", s.verified);
  j.end_object();
}

double number(const YAML::Node& n, const std::string& what) {
  if (!n || !n.IsScalar()) throw std::runtime_error(what + " is missing");
  return n.as<double>();
}
}  // namespace

void write_json(JsonWriter& j, const Calibration& c) {
  write_key(j, c.key);
  j.key("reused_from_cache").begin_object();
  for (const auto& [space, file] : c.reused_from) j.field(space, file);
  j.end_object();
  j.key("spaces").begin_object();
  for (const SpaceCalibration& s : c.spaces) write_space(j, s);
  j.end_object();
}

std::string to_cache_json(const Calibration& c) {
  JsonWriter j;
  j.begin_object();
  j.field("schema", kSchema);
  write_json(j, c);
  j.end_object();
  return j.str() + "\n";
}

std::optional<Calibration> from_cache_json(const std::string& text, std::string& why) {
  try {
    const YAML::Node doc = YAML::Load(text);
    if (!doc.IsMap() || !doc["schema"] || doc["schema"].as<std::string>() != kSchema) {
      why = std::string("not a ") + kSchema + " file";
      return std::nullopt;
    }
    Calibration c;
    const YAML::Node k = doc["key"];
    if (!k || !k.IsMap()) throw std::runtime_error("key is missing");
    c.key.git_commit = k["git_commit"].as<std::string>();
    c.key.hostname = k["hostname"].as<std::string>();
    c.key.cpu_model = k["cpu_model"].as<std::string>();
    c.key.kokkos_version = k["kokkos_version"].as<std::string>();
    c.key.gpu_pci_bus_id = k["gpu_pci_bus_id"].as<std::string>();
    c.key.host_threads = k["host_threads"].as<int>();
    c.key.cpus_allowed = k["cpus_allowed"].as<int>();
    const YAML::Node spaces = doc["spaces"];
    if (!spaces || !spaces.IsMap()) throw std::runtime_error("spaces is missing");
    for (const auto& entry : spaces) {
      SpaceCalibration s;
      s.space = entry.first.as<std::string>();
      const YAML::Node v = entry.second;
      const std::string at = "spaces." + s.space + ".";
      s.host = v["host"].as<bool>();
      s.copy_GBps = number(v["bandwidth_GBps"]["copy"], at + "bandwidth_GBps.copy");
      s.triad_GBps = number(v["bandwidth_GBps"]["triad"], at + "bandwidth_GBps.triad");
      if (const YAML::Node vc = v["bandwidth_GBps"]["vendor_copy"]) s.vendor_copy_GBps = number(vc, at + "bandwidth_GBps.vendor_copy");
      s.stream_bytes = v["stream_bytes_per_array"].as<std::size_t>();
      for (const auto& g : v["gemm_GFLOPs"]) s.gemm_GFLOPs[g.first.as<std::string>()] = g.second.as<double>();
      for (const auto& g : v["gemm_n"]) s.gemm_n[g.first.as<std::string>()] = g.second.as<int>();
      s.launch_latency_us = number(v["launch_latency_us"], at + "launch_latency_us");
      if (const YAML::Node l = v["link_GBps"]; l && l.IsMap()) {
        s.link = Link{number(l["pageable_to_device"], at + "link_GBps.pageable_to_device"),
                      number(l["pageable_to_host"], at + "link_GBps.pageable_to_host"),
                      number(l["pinned_to_device"], at + "link_GBps.pinned_to_device"),
                      number(l["pinned_to_host"], at + "link_GBps.pinned_to_host")};
      }
      s.seconds = number(v["seconds"], at + "seconds");
      s.measured_at = v["measured_at"].as<std::string>();
      s.verified = v["verified"].as<std::string>();
      if (!(s.copy_GBps > 0) || !(s.triad_GBps > 0) || s.gemm_GFLOPs.empty())
        throw std::runtime_error(at + " holds no positive rates");
      c.spaces.push_back(std::move(s));
    }
    return c;
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

namespace {
std::string summary(const SpaceCalibration& s) {
  std::ostringstream o;
  o << std::setprecision(3) << "triad " << s.triad_GBps << " GB/s, copy " << s.copy_GBps << " GB/s (deep_copy "
    << s.vendor_copy_GBps << " GB/s)";
  for (const auto& [precision, rate] : s.gemm_GFLOPs)
    o << ", " << precision << " GEMM " << rate << " GFLOP/s (n = " << s.gemm_n.at(precision) << ")";
  o << ", launch " << s.launch_latency_us << " us";
  if (s.link)
    o << ", link h2d " << s.link->pageable_to_device << "/" << s.link->pinned_to_device << " GB/s, d2h "
      << s.link->pageable_to_host << "/" << s.link->pinned_to_host << " GB/s (pageable/pinned)";
  return o.str();
}
}  // namespace

std::string default_machine_cache(const Key& key) {
  std::string dir;
  if (const char* d = std::getenv("MINIAPP_CALIBRATION_CACHE"); d && *d) dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/kokkos-miniapp";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/kokkos-miniapp";
  if (dir.empty()) return "";
  // FNV-1a of the key: one file per build, thread count and GPU on this host.
  std::uint64_t hash = 1469598103934665603ull;
  const std::string text = key.git_commit + '\n' + key.cpu_model + '\n' + key.kokkos_version + '\n' +
                           key.gpu_pci_bus_id + '\n' + std::to_string(key.host_threads) + '\n' +
                           std::to_string(key.cpus_allowed);
  for (unsigned char ch : text) hash = (hash ^ ch) * 1099511628211ull;
  std::ostringstream name;
  name << dir << "/calibration-" << key.hostname << "-" << std::hex << std::setw(16) << std::setfill('0') << hash
       << ".json";
  return name.str();
}

namespace {
// The calibration a cache file holds for `key`, if any; `why` says why not where that is worth a line.
std::optional<Calibration> read_cache(const std::string& file, const Key& key, double max_age_seconds,
                                      std::string& why) {
  std::error_code ec;
  if (file.empty() || !fs::exists(file, ec)) return std::nullopt;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::optional<Calibration> c = from_cache_json(text.str(), why);
  if (!c) return std::nullopt;
  if (!(c->key == key)) {
    why = "measured for another build, machine or thread count";
    return std::nullopt;
  }
  const auto age = fs::file_time_type::clock::now() - fs::last_write_time(file, ec);
  if (!ec && std::chrono::duration<double>(age).count() > max_age_seconds) {
    why = "older than " + std::to_string(static_cast<long>(max_age_seconds / 3600)) + " hours";
    return std::nullopt;
  }
  return c;
}
}  // namespace

Calibration calibrate(const std::vector<std::string>& spaces, const Key& key, const CacheFiles& files,
                      std::ostream* log, const std::optional<ProbeSizes>& sizes, bool fresh) {
  // The output directory's file has no age limit: it records what this directory's runs measured.
  std::vector<std::pair<std::string, Calibration>> caches;
  if (!fresh)
    for (const auto& [file, max_age] : {std::pair{files.output, 1e300}, std::pair{files.machine, files.max_age_seconds}}) {
      std::string why;
      if (auto c = read_cache(file, key, max_age, why)) caches.emplace_back(file, std::move(*c));
      else if (!why.empty() && log) *log << "calibration: not using " << file << " (" << why << ")\n";
    }

  Calibration result;
  result.key = key;
  bool probed = false;
  for (const std::string& space : spaces) {
    const SpaceCalibration* cached = nullptr;
    for (const auto& [file, c] : caches)
      if ((cached = c.find(space))) {
        result.reused_from[space] = file;
        break;
      }
    if (cached) {
      result.spaces.push_back(*cached);
      if (log) *log << "calibration of " << space << ": from " << result.reused_from[space] << " (measured "
                    << cached->measured_at << ")\n";
      continue;
    }
    if (log) *log << "calibrating " << space << " ..." << std::flush;
    const ProbeSizes s = sizes ? *sizes : default_sizes(is_host_space_name(space));
    result.spaces.push_back(probe(space, s));
    probed = true;
    if (log) *log << " " << summary(result.spaces.back()) << " (" << std::setprecision(2) << result.spaces.back().seconds
                  << " s)\n";
  }

  // Each file keeps the spaces it had that this run did not use, for the next run.
  auto merged_with = [&](const std::string& file) {
    Calibration out = result;
    out.reused_from.clear();
    for (const auto& [name, c] : caches)
      if (name == file)
        for (const SpaceCalibration& s : c.spaces)
          if (!out.find(s.space)) out.spaces.push_back(s);
    return out;
  };
  const bool output_current = !caches.empty() && caches.front().first == files.output &&
                              std::all_of(spaces.begin(), spaces.end(), [&](const std::string& s) {
                                const auto it = result.reused_from.find(s);
                                return it != result.reused_from.end() && it->second == files.output;
                              });
  if (!output_current) write_atomically(files.output, to_cache_json(merged_with(files.output)));
  if (probed && !files.machine.empty()) {
    // A machine cache that cannot be written costs the next run a probe, nothing more.
    try {
      fs::create_directories(fs::path(files.machine).parent_path());
      write_atomically(files.machine, to_cache_json(merged_with(files.machine)));
    } catch (const std::exception& e) {
      if (log) *log << "calibration: cannot keep it for later runs in " << files.machine << ": " << e.what() << "\n";
    }
  }
  return result;
}

std::pair<double, std::string> memory_roof(const SpaceCalibration& c) {
  std::pair<double, std::string> best{c.copy_GBps, "copy"};
  if (c.triad_GBps > best.first) best = {c.triad_GBps, "triad"};
  if (c.vendor_copy_GBps > best.first) best = {c.vendor_copy_GBps, "vendor copy"};
  return best;
}

std::optional<RooflinePlace> place(const SpaceCalibration& c, Precision precision, const WorkEstimate& work,
                                   double compute_seconds) {
  const double bytes = work.bytes_read + work.bytes_written;
  const auto peak = c.gemm_GFLOPs.find(to_string(precision));
  if (work.flops <= 0 || bytes <= 0 || compute_seconds <= 0 || peak == c.gemm_GFLOPs.end()) return std::nullopt;
  RooflinePlace p;
  p.intensity = work.flops / bytes;
  std::tie(p.bandwidth_GBps, p.bandwidth_from) = memory_roof(c);
  p.peak_GFLOPs = peak->second;
  const double memory_roof = p.bandwidth_GBps * p.intensity;
  p.limited_by = memory_roof < p.peak_GFLOPs ? "memory" : "compute";
  p.bound_GFLOPs = std::min(memory_roof, p.peak_GFLOPs);
  p.fraction = work.flops / compute_seconds * 1e-9 / p.bound_GFLOPs;
  return p;
}

}  // namespace miniapp::calibration
