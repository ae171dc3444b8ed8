#pragma once
// When the harness moves a workload's declared inputs and outputs between host and the memory
// space of the execution space: the four cases of the NREL copy experiment (seed 000).

#include <array>
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

inline constexpr std::array<MirrorPolicy, 5> kAllMirrorPolicies = {
    MirrorPolicy::Host, MirrorPolicy::CopyEveryIteration, MirrorPolicy::InputsResident, MirrorPolicy::AllResident,
    MirrorPolicy::CopyEveryIterationPinned};

constexpr std::string_view to_string(MirrorPolicy p) {
  switch (p) {
    case MirrorPolicy::Host: return "host";
    case MirrorPolicy::CopyEveryIteration: return "copy-every-iteration";
    case MirrorPolicy::InputsResident: return "inputs-resident";
    case MirrorPolicy::AllResident: return "all-resident";
    case MirrorPolicy::CopyEveryIterationPinned: return "copy-every-iteration-pinned";
  }
  return "?";
}

constexpr std::string_view describe(MirrorPolicy p) {
  switch (p) {
    case MirrorPolicy::Host: return "compute on a host space, no copies";
    case MirrorPolicy::CopyEveryIteration: return "inputs in and outputs out around every iteration";
    case MirrorPolicy::InputsResident: return "inputs copied once, outputs copied back every iteration";
    case MirrorPolicy::AllResident: return "inputs copied once, outputs stay on the device";
    case MirrorPolicy::CopyEveryIterationPinned:
      return "as copy-every-iteration, through page-locked (pinned) host mirrors; device spaces only";
  }
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
