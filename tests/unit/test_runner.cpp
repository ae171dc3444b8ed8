// The run loop's exit codes and statuses, and the durability of what it writes: signals that
// arrive during verification or while results are written, write errors, and the thread sweep.

#include "miniapp/core/exit_codes.hpp"
#include "miniapp/core/field.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/record/writers.hpp"
#include "miniapp/core/atomic_file.hpp"
#include "miniapp/core/clock.hpp"
#include "miniapp/commands/run/runner.hpp"
#include "miniapp/commands/run/thread_sweep.hpp"

#include "../common/scratch_dir.hpp"
#include "../common/stand_in_plan.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace miniapp;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const auto* const kRemoveScratch = ::testing::AddGlobalTestEnvironment(
    new miniapp::testing::RemoveScratchUnlessFailed(miniapp::testing::scratch_root("unit")));

fs::path fresh_dir(const std::string& name) { return miniapp::testing::fresh_scratch_dir("unit", name); }

// A plan of `count` measurements of one case, run by a stand-in for the workloads, with the
// signal handlers of a real run; what the run saved is kept, as the files would keep it.
class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    deck = miniapp::testing::one_case_deck();
    plan = miniapp::testing::stand_in_plan(3);
    record.deck = &deck;
    install_interrupt_handlers();
    clear_interrupt_request();
  }
  void TearDown() override {
    clear_interrupt_request();
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGINT, SIG_DFL);
  }

  static Measurement verified(const MeasurementSpec& spec, bool passed = true) {
    Measurement m;
    m.spec = spec;
    m.seconds.total = {1.0};
    m.verification.checked = true;
    m.verification.passed = passed;
    return m;
  }

  int run(const MeasureFunction& measure, const SaveFunction& save = {}) {
    return run_plan(plan, record, measure, [&](const RunRecord& r) {
      if (save) save(r);
      saved_status = r.status;
      saved_count = r.measurements.size();
      ++saves;
    }, true);
  }

  Deck deck;
  RunRecord record;
  std::vector<MeasurementSpec> plan;
  std::string saved_status;
  std::size_t saved_count = 0;
  int saves = 0;
};

}  // namespace

TEST_F(RunnerTest, EveryVerifiedMeasurementEndsComplete) {
  EXPECT_EQ(run([](const MeasurementSpec& s) { return verified(s); }), exit_code::kAllVerified);
  EXPECT_EQ(saved_status, "complete");
  EXPECT_EQ(saved_count, 3u);
  EXPECT_FALSE(record.provenance.finished.empty());
}

TEST_F(RunnerTest, AFailedVerificationRunsTheRestAndExitsOne) {
  EXPECT_EQ(run([](const MeasurementSpec& s) { return verified(s, s.size != 11); }), exit_code::kVerificationFailed);
  EXPECT_EQ(saved_status, "complete");
  EXPECT_EQ(saved_count, 3u);
}

TEST_F(RunnerTest, ASignalDuringTheLastVerificationIsNotLost) {
  // The signal arrives while the last measurement verifies: no iteration check follows it.
  const int code = run([](const MeasurementSpec& s) {
    if (s.size == 12) std::raise(SIGTERM);
    return verified(s);
  });
  EXPECT_EQ(code, exit_code::kInterruptedBase + SIGTERM);
  EXPECT_EQ(saved_status, "interrupted");
  EXPECT_EQ(saved_count, 3u) << "the measurement that finished is kept";
}

TEST_F(RunnerTest, ASignalDuringAnEarlierVerificationStopsBeforeTheNextMeasurement) {
  int measured = 0;
  const int code = run([&](const MeasurementSpec& s) {
    ++measured;
    if (s.size == 10) std::raise(SIGINT);
    return verified(s);
  });
  EXPECT_EQ(code, exit_code::kInterruptedBase + SIGINT);
  EXPECT_EQ(measured, 1);
  EXPECT_EQ(saved_status, "interrupted");
  EXPECT_EQ(saved_count, 1u);
}

TEST_F(RunnerTest, ASignalWhileTheFinalResultsAreWrittenEndsInterrupted) {
  const int code = run([](const MeasurementSpec& s) { return verified(s); },
                       [](const RunRecord& r) {
                         if (r.status == "complete") std::raise(SIGTERM);
                       });
  EXPECT_EQ(code, exit_code::kInterruptedBase + SIGTERM);
  EXPECT_EQ(saved_status, "interrupted") << "the last file written must not say complete";
  EXPECT_EQ(saved_count, 3u);
}

TEST_F(RunnerTest, AWriteErrorExitsThreeWithThePath) {
  const int code = run([](const MeasurementSpec& s) { return verified(s); },
                       [](const RunRecord& r) {
                         if (r.measurements.size() == 2) throw WriteError("out/results.json", "writing", ENOSPC);
                       });
  EXPECT_EQ(code, exit_code::kRuntimeError);
  EXPECT_EQ(record.status, "failed");
  EXPECT_NE(record.error.find("out/results.json"), std::string::npos) << record.error;
  EXPECT_NE(record.error.find(std::strerror(ENOSPC)), std::string::npos) << record.error;
}

TEST_F(RunnerTest, AnErrorInAMeasurementExitsThreeAndKeepsTheFinishedOnes) {
  const int code = run([](const MeasurementSpec& s) {
    if (s.size == 11) throw std::runtime_error("device out of memory");
    return verified(s);
  });
  EXPECT_EQ(code, exit_code::kRuntimeError);
  EXPECT_EQ(saved_status, "failed");
  EXPECT_EQ(saved_count, 1u);
}

TEST(WriteAtomically, WritesTheContentAndLeavesNoTemporaryFile) {
  const fs::path dir = fresh_dir("atomic");
  const fs::path file = dir / "results.json";
  write_atomically(file.string(), "first");
  write_atomically(file.string(), "second");
  EXPECT_EQ(read_file(file), "second");
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "results.json") << "left behind: " << entry.path();
}

TEST(WriteAtomically, AFailedWriteKeepsThePreviousFileAndNamesThePath) {
  const fs::path dir = fresh_dir("atomic-fail");
  const fs::path file = dir / "results.json";
  write_atomically(file.string(), "good");
  // The temporary file (one per process) cannot be created: a directory is in its place.
  fs::create_directory(dir / ("results.json.tmp." + std::to_string(getpid())));
  try {
    write_atomically(file.string(), "new");
    FAIL() << "no error";
  } catch (const WriteError& e) {
    EXPECT_EQ(e.path, file.string());
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(EISDIR)), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(file), "good");
}

TEST(OutputSample, IsEvenlySpacedOverTheWholeFieldForEverySize) {
  for (std::size_t n : {1u, 5u, 4096u, 4097u, 6000u, 8191u, 8192u, 100000u}) {
    Field<double*, Kokkos::DefaultHostExecutionSpace> f("values", n);
    for (std::size_t i = 0; i < n; ++i) f.host(i) = static_cast<double>(i);
    const std::vector<double> s = f.sample(4096);
    ASSERT_EQ(s.size(), std::min<std::size_t>(n, 4096)) << n;
    EXPECT_EQ(s.front(), 0.0) << n;
    EXPECT_EQ(s.back(), static_cast<double>(n - 1)) << "the sample must reach the end, n = " << n;
    for (std::size_t k = 1; k < s.size(); ++k) {
      const double gap = s[k] - s[k - 1];
      EXPECT_GE(gap, std::floor(double(n - 1) / double(s.size() - 1))) << n << " at " << k;
      EXPECT_LE(gap, std::ceil(double(n - 1) / double(s.size() - 1))) << n << " at " << k;
    }
  }
}

TEST(ThreadSweep, MediansReadTheColumnsByName) {
  const fs::path dir = fresh_dir("sweep-csv");
  // Columns in another order than results.csv writes them, with one the sweep does not know.
  std::ofstream(dir / "results.csv") << "total_s,extra,space,policy,size,precision,variant,case,generate,repetition\n"
                                        "3.0,x,serial,host,64,float32,direct,c,host,0\n"
                                        "1.0,x,serial,host,64,float32,direct,c,host,1\n"
                                        "2.0,x,serial,host,64,float32,direct,c,host,2\n";
  const auto medians = median_totals((dir / "results.csv").string());
  ASSERT_EQ(medians.size(), 1u);
  EXPECT_EQ(medians.begin()->first, "c direct float32 size 64 serial/host");
  EXPECT_DOUBLE_EQ(medians.begin()->second, 2.0);

  std::ofstream(dir / "old.csv") << "case,variant,total_s\nc,direct,1.0\n";
  EXPECT_THROW(median_totals((dir / "old.csv").string()), std::runtime_error);
}

TEST(ThreadSweep, ASignalToTheSweepStopsItBeforeTheNextRun) {
  // Each "run" ignores SIGTERM, sends it to the sweep and exits normally: the signal reaches the
  // sweep, not a run that could report it. No further run may start.
  const fs::path dir = fresh_dir("sweep-signal");
  const fs::path script = dir / "run.sh";
  std::ofstream(script) << "#!/bin/sh\ntrap '' TERM\ntouch \"" << (dir / "ran-").string()
                        << "$KOKKOS_NUM_THREADS\"\nkill -TERM $PPID\nsleep 0.2\nexit 0\n";
  fs::permissions(script, fs::perms::owner_all);
  fs::create_directories(dir / "out");
  const int code =
      run_thread_sweep({1, 2, 4}, {script.string()}, (dir / "out").string(), true, script.string());
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
  EXPECT_EQ(code, exit_code::kInterruptedBase + SIGTERM);
  EXPECT_TRUE(fs::exists(dir / "ran-1"));
  EXPECT_FALSE(fs::exists(dir / "ran-2")) << "a run started after the sweep was signalled";
  EXPECT_FALSE(fs::exists(dir / "ran-4"));
}
