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

#ifdef MINIAPP_SOURCE_DIR
// Every results.json at `path` (a file, or every one below a directory) against
// miniapp/record/results.schema.json, by tests/record/validate_results.py under Debian's Python
// (python3-jsonschema, which scripts/bootstrap-debian.sh installs). Exit code 0: all valid.
inline CommandResult validate_results(const std::string& path) {
  return run_shell_command("/usr/bin/python3 " MINIAPP_SOURCE_DIR "/tests/record/validate_results.py '" + path +
                           "' 2>&1");
}
#endif

}  // namespace miniapp::testing
