#pragma once
// Where one long computation (a whole regression fit, a large dense factorisation) may stop for
// SIGTERM or SIGINT between its own steps, so that a harness iteration of minutes still ends
// within Slurm's grace period.

#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/spaces.hpp"

#include <cstdint>

namespace miniapp {

// A device space runs launches asynchronously: a host that only checked the flag could have a
// whole queue of steps (a thousand launches) still to wait for once it stops. Every this many
// steps it waits for the device, so a signal waits behind at most this many. Not a timing fence:
// the harness still fences around compute.
inline constexpr std::int64_t kStepsQueuedBetweenChecks = 64;

// Throws Interrupted when a signal has arrived; `step` counts the computation's steps.
template <class Space>
void interruption_point(const Space& space, std::int64_t step) {
  if constexpr (!is_host_space<Space>()) {
    if (step % kStepsQueuedBetweenChecks == 0) space.fence();
  } else {
    (void)space, (void)step;
  }
  throw_if_interrupted();
}

}  // namespace miniapp
