#pragma once
// The one way the mini-app starts another process, without a shell in between.
// run_child: this binary (or another program) as a child that does the work and saves its own
// results while the parent waits: the thread sweep (one run per host thread count), `miniapp
// advise` running a deck. SIGTERM and SIGINT reach the child even when only the parent was
// signalled (`kill <pid>`, `timeout`; Slurm signals every process of the step itself).
// run_process: a tool (sbatch, sacct, bash, python3), its output captured or shared.
// replace_process: another program in this process's place (`miniapp report` becoming its script).

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace miniapp {

// From now on SIGTERM and SIGINT are remembered and passed on to the child run_child is waiting
// for. Forgets a signal received before.
void forward_stop_signals();

// The stop signal received since forward_stop_signals(), 0 when none.
int stop_signal_received();

// Starts `executable` with `args` (args[0] included), runs `in_child` in the child just before the
// exec, and waits. Returns the child's exit code (128+N when a signal N killed it), or nothing when
// a stop signal had arrived before the child could start (then none starts). Throws
// std::runtime_error when no process can be started.
std::optional<int> run_child(const std::string& executable, const std::vector<std::string>& args,
                             const std::function<void()>& in_child = {});

struct ProcessResult {
  int exit_code = -1;  // 127: the program was not found; 128+N: killed by signal N
  std::string out, err;
};

// Runs argv[0] from PATH with `extra_env` added to this environment. With capture, stdout and
// stderr are returned; without, the program shares this process's terminal.
ProcessResult run_process(const std::vector<std::string>& argv, bool capture,
                          const std::vector<std::pair<std::string, std::string>>& extra_env = {});

// Runs `executable` with `args` (args[0] included) in place of this process, stdout flushed first.
// Returns only when it cannot, with why.
std::string replace_process(const std::string& executable, const std::vector<std::string>& args);

}  // namespace miniapp
