#include "miniapp/commands/submit/process.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace miniapp::submit {

ProcessResult run_process(const std::vector<std::string>& argv, bool capture,
                          const std::vector<std::pair<std::string, std::string>>& extra_env) {
  ProcessResult result;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (capture && (pipe(out_pipe) != 0 || pipe(err_pipe) != 0)) {
    result.err = "cannot create a pipe";
    return result;
  }
  const pid_t pid = fork();
  if (pid < 0) {
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
    for (const auto& [name, value] : extra_env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
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
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  return result;
}

}  // namespace miniapp::submit
