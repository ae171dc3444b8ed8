#include "miniapp/core/device_info.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace miniapp;

TEST(DeviceInfo, SelectionNamesTheCommandLineFlagFirst) {
  EXPECT_EQ(device_selection({"miniapp", "--kokkos-device-id=2", "deck.yaml"}), "command line --kokkos-device-id=2");
  EXPECT_EQ(device_selection({"miniapp", "--kokkos-device-id", "3", "deck.yaml"}),
            "command line --kokkos-device-id 3");
}

TEST(DeviceInfo, SelectionFallsBackToEnvironmentThenSlurmLocalRank) {
  ::setenv("KOKKOS_DEVICE_ID", "1", 1);
  EXPECT_EQ(device_selection({"miniapp", "deck.yaml"}), "environment KOKKOS_DEVICE_ID=1");
  ::unsetenv("KOKKOS_DEVICE_ID");
  ::setenv("SLURM_LOCALID", "3", 1);
  EXPECT_NE(device_selection({"miniapp"}).find("SLURM_LOCALID=3"), std::string::npos);
  ::unsetenv("SLURM_LOCALID");
  EXPECT_EQ(device_selection({"miniapp"}), "Kokkos' default: the first visible device");
}
