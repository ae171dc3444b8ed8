#pragma once
// SIGTERM (Slurm's time limit, scancel) and SIGINT end a run between iterations, after the
// results of every finished measurement are on disk. A signal is remembered until the run has
// acted on it: one that arrives during verification or while results are written still ends the
// run as interrupted.

#include <stdexcept>

namespace miniapp {

struct Interrupted : std::runtime_error {
  explicit Interrupted(int signal_number);
  int signal_number;
};

void install_interrupt_handlers();
bool interrupt_requested();
// The signal received, 0 when none.
int pending_signal();
void throw_if_interrupted();
// Forgets a received signal (tests that raise one on purpose).
void clear_interrupt_request();

}  // namespace miniapp
