#pragma once
// What every workload's typed tests do around a kernel outside the harness.

#include "miniapp/core/field.hpp"
#include "miniapp/core/harness.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/mirror_policy.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/workload.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <utility>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace miniapp::testing {

// Why `workload`'s `variant` cannot run in this build (it calls Kokkos Kernels, which this build
// lacks; or a newer Kokkos Kernels than this one), from the workload's own variant table: empty
// when it can. A test that needs such a variant skips with this reason.
inline std::string unavailable(const std::string& workload, const std::string& variant) {
  const Workload* w = find_workload(workload);
  if (w == nullptr) throw std::invalid_argument("no workload " + workload);
  for (const VariantInfo& v : w->variants())
    if (v.name == variant) return v.unavailable_reason;
  throw std::invalid_argument("no variant " + variant + " of " + workload);
}

// The variants of `names` this build can run.
inline std::vector<std::string> runnable(const std::string& workload, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names)
    if (unavailable(workload, name).empty()) out.push_back(name);
  return out;
}

#define MINIAPP_SKIP_IF_UNAVAILABLE(workload, variant)                                          \
  if (const std::string why_unavailable = ::miniapp::testing::unavailable(workload, variant); \
      !why_unavailable.empty())                                                               \
  GTEST_SKIP() << variant << ": " << why_unavailable

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

// The mirror policies the harness runs on this space (`host` only on host spaces, pinned
// mirrors only on device spaces).
template <class Space>
std::vector<MirrorPolicy> policies_for() {
  std::vector<MirrorPolicy> out;
  for (MirrorPolicy p : kAllMirrorPolicies)
    if (policy_runs_on(p, is_host_space<Space>())) out.push_back(p);
  return out;
}

// A death test's child must start afresh (re-run the binary) rather than be forked from a
// process whose OpenMP threads it would not have.
inline void use_fresh_processes_for_death_tests() { ::testing::GTEST_FLAG(death_test_style) = "threadsafe"; }

// For a death test (a process of its own, since a signal cannot be taken back): runs `work`,
// raises SIGTERM `after_s` seconds into it, and exits 0 when the work threw Interrupted within
// a second of the signal, 1 when it took longer, 2 when it finished without noticing.
template <class Work>
[[noreturn]] void exit_with_interruption_delay(Work&& work, double after_s) {
  using Clock = std::chrono::steady_clock;
  install_interrupt_handlers();
  std::atomic<Clock::rep> raised{0};
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::duration<double>(after_s));
    raised = Clock::now().time_since_epoch().count();
    std::raise(SIGTERM);
  });
  signaller.detach();
  try {
    work();
  } catch (const Interrupted&) {
    const double delay = std::chrono::duration<double>(Clock::now().time_since_epoch() -
                                                       Clock::duration(raised.load())).count();
    std::fprintf(stderr, "stopped %.3f s after SIGTERM\n", delay);
    std::_Exit(delay <= 1.0 ? 0 : 1);
  }
  std::fprintf(stderr, "finished without noticing SIGTERM (raised: %s)\n", raised.load() ? "yes" : "no");
  std::_Exit(2);
}

// As exit_with_interruption_delay, for work that is quick on a fast machine: runs `work` once to
// time it, then again with SIGTERM a quarter of that time into it, so the signal lands inside the
// work on every machine (a fixed delay let a fast build finish first).
template <class Work>
[[noreturn]] void exit_with_interruption_midway(Work&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  const double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  exit_with_interruption_delay(std::forward<Work>(work), once / 4);
}

}  // namespace miniapp::testing
