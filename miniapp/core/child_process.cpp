#include "miniapp/core/child_process.hpp"

#include "miniapp/core/exit_codes.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace miniapp {

namespace {
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_signal = 0;

// Waits for pid through EINTR; its exit code, or 128+N when signal N killed it.
int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? exit_code::kInterruptedBase + WTERMSIG(status) : -1;
}

// The argument (or environment) vector an exec call takes, built before any fork so the child
// allocates nothing between fork and exec.
class ExecVector {
 public:
  explicit ExecVector(std::vector<std::string> strings) : strings_(std::move(strings)) {
    for (std::string& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char* const* get() const { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// This process's environment with `extra` set over it.
ExecVector environment_with(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool overridden =
        std::any_of(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == name; });
    if (!overridden) entries.push_back(entry);
  }
  for (const auto& [name, value] : extra) entries.push_back(name + "=" + value);
  return ExecVector(std::move(entries));
}

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
  const ExecVector argv(args);
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
    ::execv(executable.c_str(), argv.get());
    _exit(exit_code::kRuntimeError);
  }
  g_child = pid;
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  const int code = wait_for(pid);
  g_child = 0;
  return code;
}

ProcessResult run_process(const std::vector<std::string>& argv, bool capture,
                          const std::vector<std::pair<std::string, std::string>>& extra_env) {
  ProcessResult result;
  const ExecVector args(argv);
  const ExecVector env = environment_with(extra_env);
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  const auto close_pipes = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) close(fd);
  };
  if (capture && (pipe(out_pipe) != 0 || pipe(err_pipe) != 0)) {
    close_pipes();
    result.err = "cannot create a pipe";
    return result;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close_pipes();
    result.err = "cannot fork";
    return result;
  }
  if (pid == 0) {
    if (capture) {
      dup2(out_pipe[1], STDOUT_FILENO);
      dup2(err_pipe[1], STDERR_FILENO);
      close(out_pipe[0]);
      close(out_pipe[1]);
      close(err_pipe[0]);
      close(err_pipe[1]);
    }
    execvpe(args.get()[0], args.get(), env.get());
    _exit(127);
  }
  if (capture) {
    close(out_pipe[1]);
    close(err_pipe[1]);
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_fds = 2;
    char buf[4096];
    while (open_fds > 0) {
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int k = 0; k < 2; ++k) {
        if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = read(fds[k].fd, buf, sizeof buf);
        if (n > 0) {
          sinks[k]->append(buf, static_cast<std::size_t>(n));
        } else {
          close(fds[k].fd);
          fds[k].fd = -1;
          --open_fds;
        }
      }
    }
  }
  result.exit_code = wait_for(pid);
  return result;
}

std::string replace_process(const std::string& executable, const std::vector<std::string>& args) {
  const ExecVector argv(args);
  std::cout.flush();
  execv(executable.c_str(), argv.get());
  return "cannot run " + executable + ": " + std::strerror(errno);
}

}  // namespace miniapp
