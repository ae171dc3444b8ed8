#include "miniapp/core/deck.hpp"

#include "miniapp/core/affinity.hpp"
#include "miniapp/core/deck_case.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace miniapp {

std::vector<int> powers_of_two_up_to(int cpus) {
  cpus = std::max(1, cpus);
  std::vector<int> counts;
  for (int n = 1; n < cpus; n *= 2) counts.push_back(n);
  counts.push_back(cpus);
  return counts;
}

std::vector<int> powers_of_two_threads() {
  const cpu_set_t set = process_cpus();
  int cpus = std::max(1, CPU_COUNT(&set));
  if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK"))
    if (const int n = std::atoi(slurm); n > 0) cpus = std::min(cpus, n);
  return powers_of_two_up_to(cpus);
}

namespace {

using deck_detail::KeysAsked;
using deck_detail::parse_case;

// `threads`: a count, a list of counts (a thread sweep) or powers-of-two.
void parse_threads(MapReader& top, Deck& deck, Diagnostics& diag) {
  if (const YAML::Node t = top.node("threads"); t.IsScalar() && t.Scalar() == "powers-of-two") {
    deck.threads = powers_of_two_threads();
  } else if (t.IsSequence()) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::optional<std::int64_t> v = as_integer(t[i]);
      if (!v || *v < 1 || *v > 100000)
        diag.error(t[i], "threads[" + std::to_string(i) + "]",
                   "found " + describe_node(t[i]) + ", expected a thread count from 1 to 100000");
      else if (std::find(deck.threads.begin(), deck.threads.end(), *v) != deck.threads.end())
        diag.error(t[i], "threads[" + std::to_string(i) + "]", "thread count " + std::to_string(*v) + " is repeated");
      else
        deck.threads.push_back(static_cast<int>(*v));
    }
    if (t.size() == 0) diag.error(t, "threads", "found an empty list, expected a thread count or a list of them");
  } else if (t.IsScalar() && !as_integer(t)) {
    diag.error(t, "threads", "found " + describe_node(t) +
                                 ", expected a thread count, a list of them, or powers-of-two (1, 2, 4, ... up to "
                                 "the CPUs this process may use)");
  } else if (auto n = top.integer("threads", 1, 100000)) {
    deck.threads = {static_cast<int>(*n)};
  }
}

// Every case; names must differ, since results, tables, merge and the advisor tell cases apart by
// name.
void parse_cases(const YAML::Node& cases, const YAML::Node& defaults, const Overrides& overrides, Deck& deck,
                 Diagnostics& diag, KeysAsked& asked) {
  std::vector<std::size_t> parsed_index;  // deck.cases[k] is cases[parsed_index[k]]
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (auto c = parse_case(cases[i], i, defaults, overrides, diag, asked)) {
      deck.cases.push_back(std::move(*c));
      parsed_index.push_back(i);
    }
  for (std::size_t k = 0; k < deck.cases.size(); ++k)
    for (std::size_t first = 0; first < k; ++first)
      if (deck.cases[first].name == deck.cases[k].name) {
        const std::size_t i = parsed_index[k];
        const YAML::Node name = cases[i]["name"];
        diag.error(name.IsDefined() ? name : cases[i], "cases[" + std::to_string(i) + "].name",
                   "case name '" + deck.cases[k].name + "' is already used by cases[" +
                       std::to_string(parsed_index[first]) + "] at line " + std::to_string(deck.cases[first].line) +
                       "; results are told apart by case name: give each case its own");
        break;
      }
}

}  // namespace

DeckResult load_deck_text(const std::string& text, const std::string& file, const Overrides& overrides) {
  DeckResult result{std::nullopt, Diagnostics(file)};
  Diagnostics& diag = result.diagnostics;
  const std::optional<YAML::Node> parsed = parse_yaml(text, diag);
  if (!parsed) return result;
  const YAML::Node& root = *parsed;
  if (!root.IsDefined() || root.IsNull()) {
    diag.error_at(1, 1, "", "the deck is empty; expected a mapping with a 'cases' list");
    return result;
  }
  MapReader top(root, "", diag);
  if (!top.valid()) return result;

  Deck deck;
  deck.file = file;
  deck.text = text;
  deck.title = top.string("title").value_or("");
  top.string("description");
  parse_threads(top, deck, diag);
  if (top.has("output")) {
    const YAML::Node out = top.node("output");
    if (out.IsScalar()) {
      deck.output_directory = out.Scalar();
    } else {
      MapReader o(out, "output", diag);
      deck.output_directory = o.string("directory").value_or("");
      if (auto f = o.choices("formats", {"json", "csv"}, true))
        deck.write_csv = std::find(f->begin(), f->end(), "csv") != f->end();
      o.finish();
    }
  }
  const YAML::Node cases = top.node("cases");
  const YAML::Node defaults = top.node("defaults");
  top.finish();
  if (!cases.IsDefined()) {
    diag.error(root, "cases", "missing; expected a list of cases, each with at least 'workload' and 'sizes'");
  } else if (!cases.IsSequence() || cases.size() == 0) {
    diag.error(cases, "cases", "found " + describe_node(cases) + ", expected a non-empty list of cases");
  } else {
    KeysAsked asked;
    parse_cases(cases, defaults, overrides, deck, diag, asked);
    if (defaults.IsDefined()) {
      MapReader d(defaults, "defaults", diag);
      if (asked.complete) d.finish_with(asked.keys);
    }
  }
  if (diag.empty()) result.deck = std::move(deck);
  return result;
}

DeckResult load_deck_file(const std::string& path, const Overrides& overrides) {
  const std::optional<std::string> text = read_text_file(path);
  if (!text) {
    DeckResult r{std::nullopt, Diagnostics(path)};
    r.diagnostics.error_at(0, 0, "", "cannot read the deck file");
    return r;
  }
  return load_deck_text(*text, path, overrides);
}

std::vector<MeasurementSpec> expand(const Deck& deck) {
  std::vector<MeasurementSpec> plan;
  for (std::size_t ci = 0; ci < deck.cases.size(); ++ci) {
    const CaseSpec& c = deck.cases[ci];
    MeasurementSpec m;
    m.case_index = ci;
    m.case_name = c.name;
    m.workload = c.workload;
    m.warmup = c.warmup;
    m.repetitions = c.repetitions;
    m.seed = c.seed;
    m.verify = c.verify;
    m.tolerance = c.tolerance;
    for (const std::string& variant : c.variants)
      for (Precision precision : c.precisions)
        for (std::size_t size : c.sizes)
          for (const std::string& space : c.spaces)
            for (MirrorPolicy policy : c.policies)
              for (Generation generate : c.generate) {
                if (!policy_runs_on(policy, is_host_space_name(space))) continue;
                m.variant = variant;
                m.precision = precision;
                m.size = size;
                m.space = space;
                m.policy = policy;
                m.generate = generate;
                plan.push_back(m);
              }
  }
  return plan;
}

std::optional<std::string> select_case(Deck& deck, const std::string& selector) {
  // Comma-separated items, each an index, a name, or a name prefix ending in '*'.
  std::vector<bool> chosen(deck.cases.size(), false);
  std::string missing;
  std::size_t start = 0;
  while (start <= selector.size()) {
    const std::size_t comma = std::min(selector.find(',', start), selector.size());
    const std::string item = selector.substr(start, comma - start);
    start = comma + 1;
    bool found = false;
    if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos) {
      const std::size_t index = item.size() < 10 ? std::stoul(item) : deck.cases.size();
      if (index < deck.cases.size()) chosen[index] = found = true;
    } else if (!item.empty() && item.back() == '*') {
      const std::string prefix = item.substr(0, item.size() - 1);
      for (std::size_t i = 0; i < deck.cases.size(); ++i)
        if (deck.cases[i].name.compare(0, prefix.size(), prefix) == 0) chosen[i] = found = true;
    } else {
      for (std::size_t i = 0; i < deck.cases.size(); ++i)
        if (!item.empty() && deck.cases[i].name == item) chosen[i] = found = true;
    }
    if (!found) missing += (missing.empty() ? "'" : ", '") + item + "'";
  }
  if (!missing.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < deck.cases.size(); ++i)
      listed += (listed.empty() ? "" : ", ") + std::to_string(i) + " " + deck.cases[i].name;
    const std::string what = selector.find(',') == std::string::npos && missing == "'" + selector + "'"
                                 ? "--case '" + selector + "'"
                                 : "--case '" + selector + "': " + missing;
    return what + ": the deck has no such case (its cases: " + listed + ")";
  }
  std::vector<CaseSpec> kept;
  for (std::size_t i = 0; i < deck.cases.size(); ++i)
    if (chosen[i]) kept.push_back(deck.cases[i]);
  deck.cases = std::move(kept);
  return std::nullopt;
}

}  // namespace miniapp
