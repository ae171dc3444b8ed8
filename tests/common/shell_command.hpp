#pragma once
// Runs a shell command line and collects what it printed (stdout and stderr, when the command
// line sends 2>&1) and its exit code: how the e2e and jobs tests run the mini-app's binary.

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace miniapp::testing {

struct CommandResult {
  int exit_code = -1;  // -1: no process, or it did not exit normally
  std::string output;
};

inline CommandResult run_shell_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace miniapp::testing
