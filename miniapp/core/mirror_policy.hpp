#pragma once
// When the harness moves a workload's declared inputs and outputs between host and the memory
// space of the execution space: the four cases of the NREL copy experiment (seed 000).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace miniapp {

enum class MirrorPolicy {
  Host,                // compute where the data live: the host space, no copies at all
  CopyEveryIteration,  // inputs host->device before and outputs device->host after every iteration
  InputsResident,      // inputs copied once; outputs copied back after every iteration
  AllResident,         // inputs copied once; outputs stay on the device, copied back once at the end
  CopyEveryIterationPinned,  // as CopyEveryIteration, the host mirrors in page-locked memory (device spaces)
};

// The one table of the policies: names (the deck's, the results', --list's) and what each does.
// Everything else (parsing, printing, the results schema's test) reads it.
struct MirrorPolicyInfo {
  MirrorPolicy policy;
  std::string_view name, description;
};

inline constexpr std::array<MirrorPolicyInfo, 5> kMirrorPolicies = {{
    {MirrorPolicy::Host, "host", "compute on a host space, no copies"},
    {MirrorPolicy::CopyEveryIteration, "copy-every-iteration", "inputs in and outputs out around every iteration"},
    {MirrorPolicy::InputsResident, "inputs-resident", "inputs copied once, outputs copied back every iteration"},
    {MirrorPolicy::AllResident, "all-resident", "inputs copied once, outputs stay on the device"},
    {MirrorPolicy::CopyEveryIterationPinned, "copy-every-iteration-pinned",
     "as copy-every-iteration, through page-locked (pinned) host mirrors; device spaces only"},
}};

inline constexpr std::array<MirrorPolicy, kMirrorPolicies.size()> kAllMirrorPolicies = [] {
  std::array<MirrorPolicy, kMirrorPolicies.size()> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = kMirrorPolicies[i].policy;
  return all;
}();

constexpr std::string_view to_string(MirrorPolicy p) {
  for (const MirrorPolicyInfo& info : kMirrorPolicies)
    if (info.policy == p) return info.name;
  return "?";
}

constexpr std::string_view describe(MirrorPolicy p) {
  for (const MirrorPolicyInfo& info : kMirrorPolicies)
    if (info.policy == p) return info.description;
  return "?";
}

inline std::optional<MirrorPolicy> parse_mirror_policy(std::string_view name) {
  for (MirrorPolicy p : kAllMirrorPolicies)
    if (to_string(p) == name) return p;
  return std::nullopt;
}

constexpr bool copies_inputs_every_iteration(MirrorPolicy p) {
  return p == MirrorPolicy::CopyEveryIteration || p == MirrorPolicy::CopyEveryIterationPinned;
}
constexpr bool copies_outputs_every_iteration(MirrorPolicy p) {
  return copies_inputs_every_iteration(p) || p == MirrorPolicy::InputsResident;
}
// The host mirrors in page-locked memory: the link's DMA reads and writes them directly, where
// pageable mirrors go through the driver's staging buffers (about 5x slower on the H100 machines).
constexpr bool pins_host_mirrors(MirrorPolicy p) { return p == MirrorPolicy::CopyEveryIterationPinned; }
// Whether a policy runs on a space: `host` on host spaces only; pinned mirrors on device spaces
// only (a host space's mirrors are its Views themselves).
constexpr bool policy_runs_on(MirrorPolicy p, bool host_space) {
  if (p == MirrorPolicy::Host) return host_space;
  if (pins_host_mirrors(p)) return !host_space;
  return true;
}

}  // namespace miniapp
