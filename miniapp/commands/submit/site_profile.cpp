#include "miniapp/commands/submit/site_profile.hpp"

#include "miniapp/core/map_reader.hpp"

#include <yaml-cpp/yaml.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#ifndef MINIAPP_SITES_SOURCE_DIR
#define MINIAPP_SITES_SOURCE_DIR ""
#endif

namespace fs = std::filesystem;

namespace miniapp::submit {

bool is_placeholder(const std::string& account) {
  return account.find('<') != std::string::npos || account.find('>') != std::string::npos;
}

namespace {

bool is_null(const YAML::Node& n) { return n.IsDefined() && n.IsNull(); }

// A string that may be null (key: null or key: ~): absent and null both give nothing.
std::optional<std::string> nullable_string(MapReader& r, const std::string& key) {
  const YAML::Node n = r.node(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (!n.IsScalar()) {
    r.diagnostics().error(n, r.key_path(key), "found " + describe_node(n) + ", expected a string or null");
    return std::nullopt;
  }
  return n.Scalar();
}

std::vector<std::string> string_list(MapReader& r, const std::string& key) {
  const YAML::Node n = r.node(key);
  std::vector<std::string> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) {
    r.diagnostics().error(n, r.key_path(key), "found " + describe_node(n) + ", expected a list of strings");
    return out;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      r.diagnostics().error(n[i], r.key_path(key) + "[" + std::to_string(i) + "]",
                            "found " + describe_node(n[i]) + ", expected a string");
      continue;
    }
    out.push_back(n[i].Scalar());
  }
  return out;
}

// Slurm memory: a whole number with an optional unit K, M, G or T ("0": all of the node's).
bool valid_memory(const std::string& s) { return std::regex_match(s, std::regex("[0-9]+[KMGT]?")); }

// Slurm's time formats: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
bool valid_time(const std::string& s) {
  return std::regex_match(s, std::regex("([0-9]+-)?[0-9]+(:[0-9]{1,2}){0,2}"));
}

void check_request(MapReader& r, const std::vector<std::string>& request, bool gpu) {
  const YAML::Node n = r.node("request");
  for (std::size_t i = 0; i < request.size(); ++i) {
    const std::string& d = request[i];
    const std::string path = r.key_path("request") + "[" + std::to_string(i) + "]";
    if (d.rfind("-", 0) != 0) r.diagnostics().error(n[i], path, "'" + d + "' is not an sbatch option (starts with -)");
    std::smatch m;
    std::string rest = d;
    while (std::regex_search(rest, m, std::regex("\\{([a-z_]*)\\}"))) {
      const std::string field = m[1];
      if (field != "cpus" && field != "memory" && !(gpu && field == "gpus"))
        r.diagnostics().error(n[i], path,
                              "unknown placeholder {" + field + "}, expected {cpus}, {memory}" +
                                  (gpu ? std::string(" or {gpus}") : std::string()));
      rest = m.suffix();
    }
  }
}

std::optional<JobShape> read_shape(const YAML::Node& node, const std::string& path, bool gpu, bool slurm,
                                   Diagnostics& diag) {
  if (!node.IsDefined() || node.IsNull()) return std::nullopt;
  MapReader r(node, path, diag);
  if (!r.valid()) return std::nullopt;
  JobShape s;
  s.partition = nullable_string(r, "partition");
  s.request = string_list(r, "request");
  check_request(r, s.request, gpu);
  if (const auto v = r.integer(gpu ? "cpus_per_gpu" : "cpus", 0, 100000)) s.cpus = static_cast<int>(*v);
  if (slurm && s.cpus == 0)
    diag.error(r.node(gpu ? "cpus_per_gpu" : "cpus"), r.key_path(gpu ? "cpus_per_gpu" : "cpus"),
               "0 (every CPU) is for scheduler: none only; give the CPUs to ask Slurm for");
  const std::string memory_key = gpu ? "memory_per_gpu" : "memory";
  s.memory = nullable_string(r, memory_key);
  if (s.memory && !valid_memory(*s.memory))
    diag.error(r.node(memory_key), r.key_path(memory_key),
               "found '" + *s.memory + "', expected Slurm memory: a whole number with K, M, G or T (e.g. 64G, 8000M, 0)");
  const bool uses_memory = std::any_of(s.request.begin(), s.request.end(),
                                       [](const std::string& d) { return d.find("{memory}") != std::string::npos; });
  if (uses_memory && !s.memory)
    diag.error(r.node("request"), r.key_path("request"), "uses {memory} but " + r.key_path(memory_key) + " is not set");
  if (gpu) {
    if (const auto v = r.integer("gpus", 1, 64)) s.gpus = static_cast<int>(*v);
    if (const auto v = r.integer("gpus_per_node", 1, 64)) s.gpus_per_node = static_cast<int>(*v);
    if (s.gpus > s.gpus_per_node)
      diag.error(r.node("gpus"), r.key_path("gpus"),
                 "asks for " + std::to_string(s.gpus) + " GPUs but gpus_per_node is " + std::to_string(s.gpus_per_node));
    const YAML::Node more = r.node("more_gpus");
    if (more.IsDefined() && !more.IsNull()) {
      MapReader m(more, r.key_path("more_gpus"), diag);
      if (m.valid()) {
        if (const auto v = m.integer("above", 1, 64)) s.more_gpus_above = static_cast<int>(*v);
        if (const auto p = m.string("partition")) s.more_gpus_partition = *p;
        if (!s.more_gpus_above || s.more_gpus_partition.empty())
          diag.error(more, m.path(), "needs both `above` (a GPU count) and `partition`");
        m.finish();
      }
    }
    const YAML::Node backend = r.node("backend");
    if (!is_null(backend) && backend.IsDefined()) s.backend = r.choice("backend", {"cuda", "hip"});
    s.monitor = nullable_string(r, "monitor");
    if (const auto v = r.integer("monitor_interval", 1, 3600)) s.monitor_interval = static_cast<int>(*v);
    s.energy_before = nullable_string(r, "energy_before");
    s.energy_after = nullable_string(r, "energy_after");
  }
  r.finish();
  return s;
}

}  // namespace

ProfileResult load_site_profile_text(const std::string& text, const std::string& file) {
  ProfileResult result{std::nullopt, Diagnostics(file)};
  Diagnostics& diag = result.diagnostics;
  const std::optional<YAML::Node> root = parse_yaml(text, diag);
  if (!root) return result;
  MapReader r(*root, "", diag);
  if (!r.valid()) return result;
  SiteProfile p;
  p.file = file;
  // A site is called by its file name: a copy under another name is another site.
  p.name = fs::path(file).stem().string();
  if (const auto v = nullable_string(r, "description")) p.description = *v;
  if (const auto v = r.choice("scheduler", {"slurm", "none"})) p.slurm = *v == "slurm";
  p.account = nullable_string(r, "account");
  if (p.account) p.account_line = r.node("account").Mark().line + 1;
  p.time = nullable_string(r, "time").value_or("");
  if (!p.time.empty() && !valid_time(p.time))
    diag.error(r.node("time"), "time", "found '" + p.time + "', expected a Slurm time such as 1:00:00 or 2-00:00:00");
  if (p.slurm && p.time.empty()) diag.error_at(1, 1, "time", "missing: the default --time of a job");
  p.output = nullable_string(r, "output").value_or("%x-%j.out");
  p.launcher = string_list(r, "launcher");
  p.directives = string_list(r, "directives");
  for (std::size_t i = 0; i < p.directives.size(); ++i)
    if (p.directives[i].rfind("-", 0) != 0)
      diag.error(r.node("directives")[i], "directives[" + std::to_string(i) + "]",
                 "'" + p.directives[i] + "' is not an sbatch option (starts with -)");
  p.cpu = read_shape(r.node("cpu"), "cpu", false, p.slurm, diag);
  p.gpu = read_shape(r.node("gpu"), "gpu", true, p.slurm, diag);
  if (!r.node("cpu").IsDefined() && !r.node("gpu").IsDefined())
    diag.error_at(1, 1, "", "the profile has neither a cpu nor a gpu section: no job can be made from it");
  r.finish();
  if (diag.empty()) result.profile = std::move(p);
  return result;
}

ProfileResult load_site_profile_file(const std::string& path) {
  const std::optional<std::string> text = read_text_file(path);
  if (!text) {
    ProfileResult r{std::nullopt, Diagnostics(path)};
    r.diagnostics.error_at(0, 0, "", "cannot read the site profile");
    return r;
  }
  return load_site_profile_text(*text, path);
}

std::vector<std::string> site_directories(const std::string& sites_dir_option) {
  if (!sites_dir_option.empty()) return {sites_dir_option};
  if (const char* env = std::getenv("MINIAPP_SITES_DIR"); env && *env) return {env};
  std::vector<std::string> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "miniapp" / "sites";
    if (fs::is_directory(installed, ec)) dirs.push_back(installed.string());
  }
  if (std::string(MINIAPP_SITES_SOURCE_DIR).size() > 0 && fs::is_directory(MINIAPP_SITES_SOURCE_DIR, ec))
    dirs.push_back(MINIAPP_SITES_SOURCE_DIR);
  return dirs;
}

std::vector<std::string> known_sites(const std::vector<std::string>& directories) {
  std::vector<std::string> names;
  for (const std::string& d : directories) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<std::string> find_site(const std::string& name, const std::vector<std::string>& directories) {
  const bool is_path = name.find('/') != std::string::npos ||
                       (name.size() > 5 && name.compare(name.size() - 5, 5, ".yaml") == 0);
  std::error_code ec;
  if (is_path) return fs::is_regular_file(name, ec) ? std::optional<std::string>(name) : std::nullopt;
  for (const std::string& d : directories) {
    const fs::path p = fs::path(d) / (name + ".yaml");
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return std::nullopt;
}

}  // namespace miniapp::submit
