#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <iostream>

#include <execinfo.h>
#include <unistd.h>

namespace {

void write_text(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  static_cast<void>(ignored);
}

// A crash in a test (SIGSEGV, SIGBUS, SIGFPE, SIGILL) names the test and prints the stack before
// the process dies as it would have: ctest says only "SegFault", and a lent GPU's unit tests are
// a log read after the machine is gone. The frames are the binary's addresses (addr2line -f -C
// -e miniapp_unit_tests ADDRESS names them). It runs on an alternate stack, so that a stack
// overflow of the main thread reports too (a worker thread's has no such stack). Sanitizer builds
// keep their own handlers, which say more.
void report_crash(const int signal) {
  write_text("\ncrashed: ");
  write_text(strsignal(signal));
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (test != nullptr) {
    write_text(" in ");
    write_text(test->test_suite_name());
    write_text(".");
    write_text(test->name());
  }
  write_text("\n");
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void report_crashes() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  static char stack[1 << 16];
  stack_t alternate{};
  alternate.ss_sp = stack;
  alternate.ss_size = sizeof stack;
  sigaltstack(&alternate, nullptr);
  struct sigaction action{};
  action.sa_handler = report_crash;
  action.sa_flags = SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(signal, &action, nullptr);
#endif
}

}  // namespace

// Run only by ctest's unit.crash-report (--gtest_also_run_disabled_tests): the report above.
TEST(CrashReport, DISABLED_ASegfaultNamesItsTest) { std::raise(SIGSEGV); }

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  report_crashes();
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
