#include "miniapp/core/deck_case.hpp"

#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"

#include <algorithm>
#include <cstdint>

namespace miniapp::deck_detail {

namespace {

const std::vector<std::string> kKnownSpaces = {MINIAPP_KNOWN_SPACE_NAMES};  // cmake/MiniappSpaces.cmake
constexpr std::int64_t kMaxSize = std::int64_t(1) << 40;
constexpr std::size_t kMaxSweepLength = 10000;

// sizes: 512 | [64, 128] | {from: 64, to: 4096, factor: 2} | {from: 100, to: 800, step: 100}
std::optional<std::vector<std::size_t>> parse_sizes(MapReader& r) {
  const YAML::Node n = r.node("sizes");
  const std::string path = r.key_path("sizes");
  Diagnostics& diag = r.diagnostics();
  if (!n.IsDefined()) {
    diag.error(r.map(), path, "missing; expected a size, a list of sizes or {from, to, factor|step}");
    return std::nullopt;
  }
  auto positive = [&](const YAML::Node& v, const std::string& p) -> std::optional<std::size_t> {
    const auto i = as_integer(v);
    if (!i || *i <= 0 || *i > kMaxSize) {
      diag.error(v, p, "found " + describe_node(v) + ", expected a positive integer");
      return std::nullopt;
    }
    return static_cast<std::size_t>(*i);
  };
  std::vector<std::size_t> sizes;
  if (n.IsScalar()) {
    auto s = positive(n, path);
    if (!s) return std::nullopt;
    sizes.push_back(*s);
  } else if (n.IsSequence()) {
    if (n.size() == 0) {
      diag.error(n, path, "found an empty list, expected at least one size");
      return std::nullopt;
    }
    bool ok = true;
    for (std::size_t i = 0; i < n.size(); ++i) {
      auto s = positive(n[i], path + "[" + std::to_string(i) + "]");
      if (s) sizes.push_back(*s);
      else ok = false;
    }
    if (!ok) return std::nullopt;
  } else if (n.IsMap()) {
    MapReader range(n, path, diag);
    const auto from = range.integer("from", 1, kMaxSize);
    const auto to = range.integer("to", 1, kMaxSize);
    const auto factor = range.real("factor", 1.0);
    const auto step = range.integer("step", 1, kMaxSize);
    const bool has_factor = range.has("factor"), has_step = range.has("step");
    range.finish();
    if (!range.has("from") || !range.has("to")) {
      diag.error(n, path, "a range needs both 'from' and 'to'");
      return std::nullopt;
    }
    if (has_factor == has_step) {
      diag.error(n, path, "a range needs exactly one of 'factor' (geometric) or 'step' (arithmetic)");
      return std::nullopt;
    }
    if (!from || !to || (has_factor && !factor) || (has_step && !step)) return std::nullopt;
    if (*to < *from) {
      diag.error(n, path, "'to' (" + std::to_string(*to) + ") is below 'from' (" + std::to_string(*from) + ")");
      return std::nullopt;
    }
    for (double s = static_cast<double>(*from); s <= static_cast<double>(*to) * (1 + 1e-12);
         s = has_factor ? s * *factor : s + static_cast<double>(*step)) {
      const auto v = static_cast<std::size_t>(s + 0.5);
      if (sizes.empty() || sizes.back() != v) sizes.push_back(v);
      if (sizes.size() > kMaxSweepLength) {
        diag.error(n, path, "the range expands to more than " + std::to_string(kMaxSweepLength) + " sizes");
        return std::nullopt;
      }
    }
  } else {
    diag.error(n, path, "found " + describe_node(n) + ", expected a size, a list of sizes or {from, to, factor|step}");
    return std::nullopt;
  }
  return sizes;
}

void parse_variants(MapReader& r, const Workload* workload, CaseSpec& c, Diagnostics& diag) {
  const std::vector<VariantInfo> infos = workload ? workload->variants() : std::vector<VariantInfo>{};
  std::vector<std::string> variant_names;
  for (const VariantInfo& v : infos) variant_names.push_back(v.name);
  for (const std::string key : {"variant", "variants"}) {
    if (!r.has(key) || !workload) continue;
    const YAML::Node given = r.node(key);
    const bool all = given.IsScalar() && given.Scalar() == "all";
    if (auto v = r.choices(key, variant_names, true)) {
      const auto unavailable_reason = [&](const std::string& name) {
        for (const VariantInfo& info : infos)
          if (info.name == name) return info.unavailable_reason;
        return std::string();
      };
      if (all)
        v->erase(std::remove_if(v->begin(), v->end(),
                                [&](const std::string& name) { return !unavailable_reason(name).empty(); }),
                 v->end());
      for (const std::string& name : *v)
        if (const std::string why = unavailable_reason(name); !why.empty())
          diag.error(r.node(key), r.key_path(key), "variant '" + name + "' is unavailable in this build: " + why);
      c.variants.insert(c.variants.end(), v->begin(), v->end());
    }
  }
  if (c.variants.empty() && workload) c.variants.push_back(variant_names.front());
}

// `spaces` (and `--spaces`), then `baseline`; false when a space is not compiled in.
bool parse_spaces(MapReader& r, const Overrides& overrides, CaseSpec& c, Diagnostics& diag) {
  const std::vector<std::string> compiled = compiled_space_names();
  c.spaces = compiled;
  const YAML::Node spaces_node = r.node("spaces");
  if (spaces_node.IsScalar() && spaces_node.Scalar() == "all") c.spaces = compiled;
  else if (auto s = r.choices("spaces", kKnownSpaces, false)) c.spaces = *s;
  if (overrides.spaces) c.spaces = *overrides.spaces;
  bool all_compiled = true;
  for (const std::string& s : c.spaces)
    if (std::find(compiled.begin(), compiled.end(), s) == compiled.end())
      all_compiled = false, diag.error(r.node("spaces"), r.key_path("spaces"),
                 "execution space '" + s + "' is not compiled into this binary (compiled: " + join(compiled) + ")");

  c.baseline = c.spaces.empty() ? "" : c.spaces.front();
  if (auto b = r.choice("baseline", kKnownSpaces)) {
    if (std::find(c.spaces.begin(), c.spaces.end(), *b) == c.spaces.end())
      diag.error(r.node("baseline"), r.key_path("baseline"),
                 "found '" + *b + "', expected one of this case's spaces: " + join(c.spaces));
    c.baseline = *b;
  }
  return all_compiled;
}

void parse_policies(MapReader& r, bool all_compiled, CaseSpec& c, Diagnostics& diag) {
  std::vector<std::string> policy_names;
  for (MirrorPolicy p : kAllMirrorPolicies) policy_names.emplace_back(to_string(p));
  for (MirrorPolicy p : kAllMirrorPolicies) c.policies.push_back(p);
  if (auto p = r.choices("policies", policy_names, true)) {
    c.policies.clear();
    for (const std::string& name : *p) c.policies.push_back(*parse_mirror_policy(name));
    // `host` runs on host spaces only and copy-every-iteration-pinned on device spaces only: a
    // case whose spaces take none of its policies would run nothing.
    const bool runs = std::any_of(c.spaces.begin(), c.spaces.end(), [&](const std::string& s) {
      return std::any_of(c.policies.begin(), c.policies.end(),
                         [&](MirrorPolicy m) { return policy_runs_on(m, is_host_space_name(s)); });
    });
    if (all_compiled && !c.spaces.empty() && !c.policies.empty() && !runs)
      diag.error(r.node("policies"), r.key_path("policies"),
                 "no measurement to run: `host` runs on host spaces only and `copy-every-iteration-pinned` on "
                 "device spaces only, and this case's spaces are " + join(c.spaces));
  }
}

void parse_generation(MapReader& r, const Workload* workload, CaseSpec& c, Diagnostics& diag) {
  c.generate = {Generation::Host};
  if (auto g = r.choices("generate", {"host", "device"}, true)) {
    c.generate.clear();
    for (const std::string& name : *g) c.generate.push_back(name == "host" ? Generation::Host : Generation::Device);
    if (workload && !workload->generates_on_device() && std::count(g->begin(), g->end(), "device") > 0)
      diag.error(r.node("generate"), r.key_path("generate"),
                 "workload '" + workload->name() + "' generates its inputs on the host only; expected 'host'");
  }
}

}  // namespace

std::optional<CaseSpec> parse_case(const YAML::Node& node, std::size_t index, const YAML::Node& defaults,
                                   const Overrides& overrides, Diagnostics& diag, KeysAsked& asked) {
  const std::string path = "cases[" + std::to_string(index) + "]";
  MapReader r(node, path, diag);
  if (!r.valid()) {
    asked.complete = false;
    return std::nullopt;
  }
  r.fall_back_to(defaults, "defaults");
  const std::size_t errors_before = diag.all().size();

  CaseSpec c;
  c.line = node.Mark().line + 1;
  std::vector<std::string> workload_names;
  for (const auto& w : workloads()) workload_names.push_back(w->name());
  const auto workload_name = r.choice("workload", workload_names);
  if (!r.has("workload"))
    diag.error(node, r.key_path("workload"), "missing; expected one of: " + join(workload_names));
  const Workload* workload = workload_name ? find_workload(*workload_name) : nullptr;
  if (workload) c.workload = workload->name();

  c.name = r.string("name").value_or(c.workload + "-" + std::to_string(index + 1));

  parse_variants(r, workload, c, diag);

  if (auto s = parse_sizes(r)) c.sizes = *s;
  if (overrides.sizes) c.sizes = *overrides.sizes;

  c.precisions = {Precision::Float32};
  if (auto p = r.choices("precision", {"float32", "float64"}, true)) {
    c.precisions.clear();
    for (const std::string& name : *p) c.precisions.push_back(name == "float32" ? Precision::Float32 : Precision::Float64);
  }

  const bool all_compiled = parse_spaces(r, overrides, c, diag);

  parse_policies(r, all_compiled, c, diag);

  parse_generation(r, workload, c, diag);

  if (auto v = r.integer("warmup", 0, 1000000)) c.warmup = static_cast<int>(*v);
  if (auto v = r.integer("repetitions", 1, 1000000)) c.repetitions = static_cast<int>(*v);
  if (auto v = r.integer("seed", 0, INT64_MAX)) c.seed = static_cast<std::uint64_t>(*v);
  if (auto v = r.boolean("verify")) c.verify = *v;
  if (auto v = r.real("tolerance", 0.0)) c.tolerance = *v;

  if (workload) {
    c.params = workload->parse(r);
    r.finish();  // only with the workload's keys known can unknown keys be told apart
  }
  asked.keys.insert(asked.keys.end(), r.known().begin(), r.known().end());
  if (!workload) asked.complete = false;
  if (diag.all().size() != errors_before || !workload) return std::nullopt;
  return c;
}

}  // namespace miniapp::deck_detail
