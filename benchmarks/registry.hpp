#pragma once
// Each bench_*.cpp registers its benchmarks once, from its own file; the driver calls every
// registrar after Kokkos is initialized (benchmarks allocate Views, which need Kokkos running).
//
//   MINIAPP_BENCHMARKS(register_matrix_benchmarks) { ... benchmark::RegisterBenchmark(...) ... }

#include <vector>

namespace miniapp::bench {

using Registrar = void (*)();

inline std::vector<Registrar>& registrars() {
  static std::vector<Registrar> all;
  return all;
}

inline bool add_registrar(Registrar r) {
  registrars().push_back(r);
  return true;
}

}  // namespace miniapp::bench

#define MINIAPP_BENCHMARKS(fn)                                                          \
  static void fn();                                                                     \
  [[maybe_unused]] static const bool fn##_added_ = ::miniapp::bench::add_registrar(&fn); \
  static void fn()
