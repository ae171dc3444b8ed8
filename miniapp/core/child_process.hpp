#pragma once
// Runs this binary (or another program) as a child that does the work and saves its own results,
// while the parent waits: the thread sweep (one run per host thread count) and `miniapp advise`
// running a deck. SIGTERM and SIGINT reach the child even when only the parent was signalled
// (`kill <pid>`, `timeout`; Slurm signals every process of the step itself).

#include <functional>
#include <optional>
#include <string>
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

}  // namespace miniapp
