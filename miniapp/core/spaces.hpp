#pragma once
// The execution spaces compiled into this binary, as a type list the harness and the tests
// iterate over, and the names the deck uses for them.

#include "miniapp/core/kokkos_compat.hpp"

#include <cctype>
#include <string>
#include <type_traits>
#include <vector>

namespace miniapp {

template <class... Ts>
struct TypeList {};

template <class T>
struct TypeTag {
  using type = T;
};

namespace detail {
template <class... A, class... B>
TypeList<A..., B...> concat(TypeList<A...>, TypeList<B...>);
template <class... Lists>
struct Concat;
template <class L>
struct Concat<L> {
  using type = L;
};
template <class L1, class L2, class... Rest>
struct Concat<L1, L2, Rest...> {
  using type = typename Concat<decltype(concat(L1{}, L2{})), Rest...>::type;
};

#if defined(KOKKOS_ENABLE_SERIAL)
using SerialList = TypeList<Kokkos::Serial>;
#else
using SerialList = TypeList<>;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
using OpenMPList = TypeList<Kokkos::OpenMP>;
#else
using OpenMPList = TypeList<>;
#endif
#if defined(KOKKOS_ENABLE_THREADS)
using ThreadsList = TypeList<Kokkos::Threads>;
#else
using ThreadsList = TypeList<>;
#endif
#if defined(KOKKOS_ENABLE_CUDA)
using CudaList = TypeList<Kokkos::Cuda>;
#else
using CudaList = TypeList<>;
#endif
#if defined(KOKKOS_ENABLE_HIP)
using HIPList = TypeList<compat::HIP>;
#else
using HIPList = TypeList<>;
#endif
}  // namespace detail

// Host spaces first, so `all` lists them before the devices and the first is a natural baseline.
using CompiledSpaces =
    typename detail::Concat<detail::SerialList, detail::OpenMPList, detail::ThreadsList, detail::CudaList,
                            detail::HIPList>::type;

template <class F, class... Spaces>
void for_each_type(TypeList<Spaces...>, F&& f) {
  (f(TypeTag<Spaces>{}), ...);
}

template <class F>
void for_each_space(F&& f) {
  for_each_type(CompiledSpaces{}, std::forward<F>(f));
}

// The spaces the tests and benchmarks instantiate. The CI's device compile checks
// (tests/device/check_device_build.sh) define MINIAPP_CHECK_DEVICE_SPACES_ONLY: the host spaces'
// test and benchmark code is compiled by the host build already, and leaving it out there takes
// minutes off each check. The mini-app itself always keeps every compiled space.
#if defined(MINIAPP_CHECK_DEVICE_SPACES_ONLY) && (defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP))
using TestedSpaces = typename detail::Concat<detail::CudaList, detail::HIPList>::type;
#else
using TestedSpaces = CompiledSpaces;
#endif

template <class F>
void for_each_tested_space(F&& f) {
  for_each_type(TestedSpaces{}, std::forward<F>(f));
}

// The deck's name of a space: Kokkos' own name in lower case ("serial", "openmp", "cuda", ...).
template <class Space>
std::string space_name() {
  std::string name = Space::name();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// True where the space computes in memory the host can address directly, so a mirror
// of its Views is the same allocation and a "copy" moves nothing.
template <class Space>
constexpr bool is_host_space() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

inline std::vector<std::string> compiled_space_names() {
  std::vector<std::string> names;
  for_each_space([&](auto tag) { names.push_back(space_name<typename decltype(tag)::type>()); });
  return names;
}

inline bool is_host_space_name(const std::string& name) {
  bool host = false;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (space_name<Space>() == name) host = is_host_space<Space>();
  });
  return host;
}

}  // namespace miniapp
