#pragma once
// What every workload's typed tests do around a kernel outside the harness.

#include "miniapp/core/field.hpp"
#include "miniapp/core/harness.hpp"
#include "miniapp/core/mirror_policy.hpp"
#include "miniapp/core/spaces.hpp"

#include <vector>

namespace miniapp::testing {

// One computation with the inputs copied in and the outputs copied back: the host mirrors of the
// outputs then hold the kernel's result.
template <template <class, class> class Kernel, class Scalar, class Space>
void run_once(Kernel<Scalar, Space>& k) {
  for (Transferable* f : k.inputs()) f->copy_to_device();
  Space space;
  k.compute(space);
  space.fence();
  for (Transferable* f : k.outputs()) f->copy_to_host();
}

// The mirror policies the harness runs on this space (`host` only on host spaces).
template <class Space>
std::vector<MirrorPolicy> policies_for() {
  std::vector<MirrorPolicy> out;
  for (MirrorPolicy p : kAllMirrorPolicies)
    if (p != MirrorPolicy::Host || is_host_space<Space>()) out.push_back(p);
  return out;
}

}  // namespace miniapp::testing
