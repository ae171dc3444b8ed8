#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <iostream>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  const int result = RUN_ALL_TESTS();
  // ctest runs the typed tests of one space through a filter (*/OpenMP.*): a filter that matches
  // nothing (a renamed space, a typo) would pass with no test run.
  if (::testing::UnitTest::GetInstance()->test_to_run_count() == 0) {
    std::cerr << "error: no test matches the filter '" << ::testing::GTEST_FLAG(filter) << "'\n";
    return 1;
  }
  return result;
}
