#pragma once
// The execution spaces compiled into this binary, as a type list the harness and the tests
// iterate over, and the names the deck uses for them.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/space_table.hpp"  // generated from cmake/MiniappSpaces.cmake

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

// True where the space computes in memory the host can address directly, so a mirror
// of its Views is the same allocation and a "copy" moves nothing. Callable in device code too
// (a kernel's `if constexpr` on its space), where CUDA is built without relaxed constexpr.
template <class Space>
KOKKOS_INLINE_FUNCTION constexpr bool is_host_space() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;
}

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

template <class L>
struct DeviceOnly;
template <class... S>
struct DeviceOnly<TypeList<S...>> {
  using type = typename Concat<TypeList<>, std::conditional_t<is_host_space<S>(), TypeList<>, TypeList<S>>...>::type;
};
}  // namespace detail

// The spaces of cmake/MiniappSpaces.cmake's table this Kokkos was built with, in the table's
// order: host spaces first, so `all` lists them before the devices and the first is a natural
// baseline.
#define MINIAPP_SPACE_LIST_ITEM(W, Space) , TypeList<Space>
using CompiledSpaces = typename detail::Concat<TypeList<> MINIAPP_FOR_EACH_SPACE(MINIAPP_SPACE_LIST_ITEM, _)>::type;
#undef MINIAPP_SPACE_LIST_ITEM

// The first compiled space (a host space wherever one is compiled): where a question about a
// workload's kernels that every space answers alike is asked. Not Kokkos' default host space,
// which a build may leave out (MINIAPP_ONLY_SPACES, cmake/MiniappSpaces.cmake).
template <class L>
struct FirstOf;
template <class S, class... Rest>
struct FirstOf<TypeList<S, Rest...>> {
  using type = S;
};
using FirstCompiledSpace = typename FirstOf<CompiledSpaces>::type;

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
#if defined(MINIAPP_CHECK_DEVICE_SPACES_ONLY)
using DeviceSpaces = typename detail::DeviceOnly<CompiledSpaces>::type;
using TestedSpaces = std::conditional_t<std::is_same_v<DeviceSpaces, TypeList<>>, CompiledSpaces, DeviceSpaces>;
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
