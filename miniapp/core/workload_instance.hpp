#pragma once
// The definitions behind Instances<W, Space> (workload.hpp): a measurement of W's kernel on one
// space, in either precision. Included by the compile unit CMake generates for each (workload,
// compiled space), which instantiates them; nothing else needs to include it.

#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/harness.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/workload.hpp"

#include <iostream>
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
    using Kernel = typename W::template Kernel<Scalar, Space>;
    std::optional<Kernel> kernel;
    // Ranks that exchange data inside compute cannot agree on an error that one of them meets
    // alone (the others may be waiting in a collective): it ends every rank at once.
    const bool exchanges = may_exchange<Kernel>::value && spec.ranks > 1;
    try {
      {
        const compat::ProfilingRegion region(spec.workload + "/" + spec.variant + "/allocate");
        if constexpr (contract::splits_across_ranks<W, Scalar, Space>)
          kernel.emplace(params, spec.variant, spec.size, ranks::Slice{ranks::rank(), spec.ranks});
        else
          kernel.emplace(params, spec.variant, spec.size);
      }
      return measure(*kernel, Space(), spec);
    } catch (const Interrupted&) {
      throw;  // every rank stops at the same point (harness.hpp)
    } catch (const std::exception& e) {
      if (!exchanges) throw;
      std::cerr << "error: rank " << ranks::rank() << ": " << e.what()
                << " (its ranks exchange data during compute, so the job ends on every rank)" << std::endl;
      ranks::abort(exit_code::kRuntimeError);
    }
  };
  return spec.precision == Precision::Float32 ? measure_in(float{}) : measure_in(double{});
}

template <class W, class Space>
bool Instances<W, Space>::generates_on_device() {
  return miniapp::generates_on_device<typename W::template Kernel<double, Space>, Space>::value;
}

}  // namespace miniapp
