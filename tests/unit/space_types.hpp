#pragma once
// Turns the compiled-space type list into GoogleTest types, named as Kokkos names the spaces,
// so ctest can run each space's tests on their own (--gtest_filter=*/OpenMP.*).

#include "miniapp/core/spaces.hpp"

#include <gtest/gtest.h>

#include <string>

namespace miniapp::testing {

template <class L>
struct ToGTestTypes;
template <class... S>
struct ToGTestTypes<TypeList<S...>> {
  using type = ::testing::Types<S...>;
};

using SpaceTypes = ToGTestTypes<TestedSpaces>::type;

struct SpaceNames {
  template <class Space>
  static std::string GetName(int) {
    return Space::name();
  }
};

}  // namespace miniapp::testing
