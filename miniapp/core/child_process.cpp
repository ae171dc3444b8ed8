#include "miniapp/core/child_process.hpp"

#include "miniapp/core/exit_codes.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace miniapp {

namespace {
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_signal = 0;

extern "C" void forward_signal(int sig) {
  g_signal = sig;
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}
}  // namespace

void forward_stop_signals() {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int stop_signal_received() { return g_signal; }

std::optional<int> run_child(const std::string& executable, const std::vector<std::string>& args,
                             const std::function<void()>& in_child) {
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Held until the child's pid is known, so a signal either stops everything before this child
  // starts or reaches the child.
  sigprocmask(SIG_BLOCK, &stop_signals, &previous);
  if (g_signal != 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return std::nullopt;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    throw std::runtime_error(std::string("cannot start a process: ") + std::strerror(error));
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (in_child) in_child();
    ::execv(executable.c_str(), argv.data());
    _exit(exit_code::kRuntimeError);
  }
  g_child = pid;
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : exit_code::kInterruptedBase + WTERMSIG(status);
}

}  // namespace miniapp
