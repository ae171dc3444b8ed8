#pragma once
// The harness owns timing, fences and transfers: a workload only enqueues kernels and
// declares which fields are inputs and outputs; the mirror policy decides when they move.

#include "miniapp/core/field.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/nvml.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/core/spaces.hpp"

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace miniapp {

// Output values kept per field to compare a space's result with the baseline space's.
inline constexpr std::size_t kOutputSampleSize = 4096;

namespace detail {
inline std::size_t moved_bytes(const std::vector<Transferable*>& fields) {
  std::size_t bytes = 0;
  for (const Transferable* f : fields)
    if (!f->mirror_is_alias()) bytes += f->bytes();
  return bytes;
}
// What the mirrors that move are: "alias" (none move: a host space), "pinned" (all of them
// page-locked) or "pageable".
inline const char* host_mirrors(const std::vector<Transferable*>& inputs, const std::vector<Transferable*>& outputs) {
  bool any = false, all_pinned = true;
  for (const std::vector<Transferable*>* fields : {&inputs, &outputs})
    for (const Transferable* f : *fields)
      if (!f->mirror_is_alias()) any = true, all_pinned = all_pinned && f->mirror_is_pinned();
  return !any ? "alias" : all_pinned ? "pinned" : "pageable";
}
}  // namespace detail

// A kernel may also generate its inputs where they are used: generate_inputs_on_device(space, seed)
// fills the device Views with the same values generate_inputs(seed) would put in the mirrors.
template <class Kernel, class Space, class = void>
struct generates_on_device : std::false_type {};
template <class Kernel, class Space>
struct generates_on_device<Kernel, Space,
                           std::void_t<decltype(std::declval<Kernel&>().generate_inputs_on_device(
                               std::declval<const Space&>(), std::uint64_t{}))>> : std::true_type {};

// A kernel split across MPI ranks may exchange data inside compute (collectives): it then says so
// with exchanges_during_compute() and reports the seconds that took with take_exchange_seconds().
template <class Kernel, class = void>
struct may_exchange : std::false_type {};
template <class Kernel>
struct may_exchange<Kernel, std::void_t<decltype(bool(std::declval<const Kernel&>().exchanges_during_compute()),
                                                 double(std::declval<Kernel&>().take_exchange_seconds()))>>
    : std::true_type {};

template <class Kernel>
bool exchanges_during_compute(const Kernel& kernel) {
  if constexpr (may_exchange<Kernel>::value) return kernel.exchanges_during_compute();
  else return (void)kernel, false;
}

namespace detail {

// The Kokkos Tools profiling region of one measurement, which holds its phases' regions:
// <case>/<space>/<policy>/<precision>/<size>.
inline std::string measurement_region(const MeasurementSpec& spec) {
  return (spec.case_name.empty() ? spec.workload : spec.case_name) + "/" + spec.space + "/" +
         std::string(to_string(spec.policy)) + "/" + to_string(spec.precision) + "/" + std::to_string(spec.size);
}

// The phases of a measurement: each fenced before and after, timed, and inside the Kokkos Tools
// profiling region <workload>/<variant>/<phase>, phase named as in the results' `seconds`.
template <class Space>
class Phases {
 public:
  Phases(const Space& space, const MeasurementSpec& spec)
      : space_(space), prefix_(spec.workload + "/" + spec.variant + "/") {}

  template <class Work>
  double timed(const char* phase, Work&& work) {
    const compat::ProfilingRegion region(prefix_ + phase);
    space_.fence();
    timer_.reset();
    work();
    space_.fence();
    return timer_.seconds();
  }
  // Host work that enqueues nothing on the space (generating on the host, verifying): no fences.
  template <class Work>
  double host(const char* phase, Work&& work) {
    const compat::ProfilingRegion region(prefix_ + phase);
    timer_.reset();
    work();
    return timer_.seconds();
  }

 private:
  Space space_;
  std::string prefix_;
  Kokkos::Timer timer_;
};

// The inputs, generated where the spec says, into the device Views or the host mirrors; the
// mirrors always get them (verification reads them). Returns the generation's seconds.
template <class Space, class Kernel>
double generate(Kernel& kernel, const Space& space, const MeasurementSpec& spec, Phases<Space>& phases) {
  if (spec.generate != Generation::Device) return phases.host("generate", [&] { kernel.generate_inputs(spec.seed); });
  if constexpr (generates_on_device<Kernel, Space>::value) {
    const double seconds = phases.timed("generate", [&] { kernel.generate_inputs_on_device(space, spec.seed); });
    // The mirrors get the generated values too (untimed): verification reads them, and the
    // copy-every-iteration policy copies them back each iteration.
    for (Transferable* f : kernel.inputs()) f->copy_to_host();
    space.fence();
    return seconds;
  } else {
    throw std::logic_error("workload '" + spec.workload + "' cannot generate its inputs on the device");
  }
}

}  // namespace detail

// Kernel requirements: inputs(), outputs() -> std::vector<Transferable*>; generate_inputs(seed)
// fills the host mirrors of the inputs (optionally generate_inputs_on_device, above); compute(space)
// enqueues the work; work() -> WorkEstimate; verify(tolerance) checks the host mirrors of the
// outputs against an independent reference, and may read the host mirrors of the inputs.
template <class Space, class Kernel>
Measurement measure(Kernel& kernel, const Space& space, const MeasurementSpec& spec) {
  if (!policy_runs_on(spec.policy, is_host_space<Space>()))
    throw std::logic_error("the " + std::string(to_string(spec.policy)) + " mirror policy needs a " +
                           (is_host_space<Space>() ? "device" : "host") + " execution space");

  Measurement m;
  m.spec = spec;
  m.work = kernel.work();
  const std::vector<Transferable*> inputs = kernel.inputs();
  const std::vector<Transferable*> outputs = kernel.outputs();
  m.mirrors_alias = detail::moved_bytes(inputs) + detail::moved_bytes(outputs) == 0;
  m.host_mirrors = detail::host_mirrors(inputs, outputs);

  detail::Phases<Space> phases(space, spec);
  auto to_device = [&] {
    for (Transferable* f : inputs) f->copy_to_device();
  };
  auto to_host = [&] {
    for (Transferable* f : outputs) f->copy_to_host();
  };

  m.seconds.generate = detail::generate(kernel, space, spec, phases);
  const bool inputs_each = copies_inputs_every_iteration(spec.policy);
  const bool outputs_each = copies_outputs_every_iteration(spec.policy);
  if (spec.policy != MirrorPolicy::Host && !inputs_each && spec.generate != Generation::Device) {
    m.seconds.setup_to_device = phases.timed("setup_to_device", to_device);
    m.bytes_one_time += detail::moved_bytes(inputs);
  }
  if (inputs_each) m.bytes_to_device_per_iteration = detail::moved_bytes(inputs);
  if (outputs_each) m.bytes_to_host_per_iteration = detail::moved_bytes(outputs);

  // On a device space, the GPU's energy and utilisation over the timed repetitions (nvml.hpp).
  std::unique_ptr<nvml::Recorder> energy;
  if constexpr (!is_host_space<Space>()) energy = nvml::recorder_for_this_process();
  // A kernel whose compute calls collectives stops for a signal only where every rank does: here
  // when any rank has one, or inside compute at a point of its own (a rank that stopped alone
  // would leave the others waiting in a collective).
  const bool exchanges = exchanges_during_compute(kernel);
  for (int it = 0; it < spec.warmup + spec.repetitions; ++it) {
    if (!exchanges) throw_if_interrupted();
    else if (const int signal = ranks::max(pending_signal())) throw Interrupted(signal);
    if (energy && it == spec.warmup) {
      space.fence();
      energy->start();
    }
    const double h2d = inputs_each ? phases.timed("to_device", to_device) : 0.0;
    const double compute = phases.timed("compute", [&] { kernel.compute(space); });
    const double d2h = outputs_each ? phases.timed("to_host", to_host) : 0.0;
    double exchanged = 0;
    if constexpr (may_exchange<Kernel>::value) exchanged = kernel.take_exchange_seconds();
    if (it < spec.warmup) continue;
    if (exchanges) m.seconds.communicate.push_back(exchanged);
    m.seconds.to_device.push_back(h2d);
    m.seconds.compute.push_back(compute);
    m.seconds.to_host.push_back(d2h);
    m.seconds.total.push_back(h2d + compute + d2h);
  }
  if (energy) m.gpu_energy = energy->stop();
  if (spec.policy == MirrorPolicy::AllResident) {
    m.seconds.final_to_host = phases.timed("final_to_host", to_host);
    m.bytes_one_time += detail::moved_bytes(outputs);
  }
  for (const Transferable* f : outputs) {
    const std::vector<double> values = f->sample(kOutputSampleSize);
    m.output_sample.insert(m.output_sample.end(), values.begin(), values.end());
  }
  if (spec.verify) phases.host("verify", [&] { m.verification = kernel.verify(spec.tolerance); });
  return m;
}

}  // namespace miniapp
