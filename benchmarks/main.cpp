// Google Benchmark driver: Kokkos is initialized once, every compiled space registers its
// benchmarks, and the run context records the Kokkos configuration and the mini-app's commit.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/record/provenance.hpp"
#include "miniapp/core/clock.hpp"

#include "registry.hpp"

#include <benchmark/benchmark.h>

#include <sstream>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  benchmark::Initialize(&argc, argv);
  const miniapp::Provenance p = miniapp::collect_provenance(argc, argv);
  benchmark::AddCustomContext("miniapp_git_commit", p.git_commit);
  benchmark::AddCustomContext("kokkos_version", p.kokkos_version);
  benchmark::AddCustomContext("kokkos_kernels_version", p.kokkos_kernels_version);
  benchmark::AddCustomContext("kokkos_configuration", p.kokkos_configuration);
  for (const auto& [k, v] : p.environment) benchmark::AddCustomContext(k, v);
  for (miniapp::bench::Registrar r : miniapp::bench::registrars()) r();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
