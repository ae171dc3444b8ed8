#pragma once
// One case of a deck (cases[i] with `defaults:` under it), read and checked: deck.cpp's part that
// knows the common keys of a case. Internal to the deck.

#include "miniapp/core/deck.hpp"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

namespace miniapp::deck_detail {

// The keys the cases asked for, so keys of `defaults:` that no case could use are reported.
struct KeysAsked {
  std::vector<std::string> keys;
  bool complete = true;  // false when a case could not be read far enough to know its keys
};

// `variant` / `variants`: `all` means every variant this build has; a variant named outright must
// be available. None given: the workload's first.

// The case, or nothing with its problems in diag.
std::optional<CaseSpec> parse_case(const YAML::Node& node, std::size_t index, const YAML::Node& defaults,
                                   const Overrides& overrides, Diagnostics& diag, KeysAsked& asked);

}  // namespace miniapp::deck_detail
