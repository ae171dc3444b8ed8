#pragma once
// Runs another program (sbatch, sacct, bash) without a shell in between.

#include <string>
#include <utility>
#include <vector>

namespace miniapp::submit {

struct ProcessResult {
  int exit_code = -1;  // 127: the program was not found; 128+N: killed by signal N
  std::string out, err;
};

// Runs argv[0] from PATH with `extra_env` added to this environment. With capture, stdout and
// stderr are returned; without, the program shares this process's terminal.
ProcessResult run_process(const std::vector<std::string>& argv, bool capture,
                          const std::vector<std::pair<std::string, std::string>>& extra_env = {});

}  // namespace miniapp::submit
