#pragma once
// The directory under $TMPDIR a test program writes into, miniapp-<program>-<pid>: removed once
// its tests have run, unless one failed, when it is kept to look into and its path printed (each
// run of the e2e, unit and jobs tests left one behind before).

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <utility>

#include <unistd.h>

namespace miniapp::testing {

inline std::filesystem::path scratch_root(const std::string& program) {
  return std::filesystem::temp_directory_path() / ("miniapp-" + program + "-" + std::to_string(getpid()));
}

// scratch_root(program) / name, emptied: a test's own directory.
inline std::filesystem::path fresh_scratch_dir(const std::string& program, const std::string& name) {
  const std::filesystem::path dir = scratch_root(program) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// At the end of the program, once every test (and every environment torn down before) has run.
inline void remove_unless_failed(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return;
  if (::testing::UnitTest::GetInstance()->Passed()) {
    std::filesystem::remove_all(dir, ec);
    if (ec) std::cout << "could not remove " << dir.string() << ": " << ec.message() << "\n";
  } else {
    std::cout << "a test failed: its files are kept in " << dir.string() << "\n";
  }
}

// Registered with ::testing::AddGlobalTestEnvironment by a test program that writes under
// scratch_root(program).
class RemoveScratchUnlessFailed : public ::testing::Environment {
 public:
  explicit RemoveScratchUnlessFailed(std::filesystem::path dir) : dir_(std::move(dir)) {}
  void TearDown() override { remove_unless_failed(dir_); }

 private:
  std::filesystem::path dir_;
};

}  // namespace miniapp::testing
