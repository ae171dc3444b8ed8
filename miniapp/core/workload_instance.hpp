#pragma once
// The definitions behind Instances<W, Space> (workload.hpp): a measurement of W's kernel on one
// space, in either precision. Included by the compile unit CMake generates for each (workload,
// compiled space), which instantiates them; nothing else needs to include it.

#include "miniapp/core/harness.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/workload.hpp"

#include <optional>

namespace miniapp {

template <class W, class Space>
Measurement Instances<W, Space>::run(const MeasurementSpec& spec, const typename W::Params& params) {
  static_assert(contract::has_kernel_members<typename W::template Kernel<float, Space>, Space>::value,
                "Kernel<Scalar, Space> must provide inputs()/outputs()/generate_inputs/compute/work/verify on every space");
  auto measure_in = [&](auto scalar) {
    using Scalar = decltype(scalar);
    // The kernel, and with it every View, lives only for this measurement; its Fields' host
    // mirrors are page-locked when the policy asks for it.
    const ScopedHostMirrors mirrors(pins_host_mirrors(spec.policy) ? HostMirrors::Pinned : HostMirrors::Pageable);
    // For Kokkos Tools, one region per measurement holding its phases: allocating (and zeroing)
    // the Views, then measure's (harness.hpp).
    const compat::ProfilingRegion measurement(detail::measurement_region(spec));
    std::optional<typename W::template Kernel<Scalar, Space>> kernel;
    {
      const compat::ProfilingRegion region(spec.workload + "/" + spec.variant + "/allocate");
      if constexpr (contract::splits_across_ranks<W, Scalar, Space>)
        kernel.emplace(params, spec.variant, spec.size, ranks::Slice{ranks::rank(), spec.ranks});
      else
        kernel.emplace(params, spec.variant, spec.size);
    }
    return measure(*kernel, Space(), spec);
  };
  return spec.precision == Precision::Float32 ? measure_in(float{}) : measure_in(double{});
}

template <class W, class Space>
bool Instances<W, Space>::generates_on_device() {
  return miniapp::generates_on_device<typename W::template Kernel<double, Space>, Space>::value;
}

}  // namespace miniapp
