// The tests that run as the ranks of one MPI job (mpirun -np 2, tests/CMakeLists.txt): MPI starts
// before Kokkos and ends after it, as in the mini-app's own run command.
#include "miniapp/core/ranks.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  miniapp::ranks::Session mpi(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    result = RUN_ALL_TESTS();
  }
  // Every rank's result counts: a test that failed on rank 1 alone fails the job on every rank.
  return miniapp::ranks::max(result);
}
