#pragma once
// SIGTERM (Slurm's time limit, scancel) and SIGINT end a run between iterations, after the
// results of every finished measurement are on disk.

#include <stdexcept>

namespace miniapp {

struct Interrupted : std::runtime_error {
  explicit Interrupted(int signal_number);
  int signal_number;
};

void install_interrupt_handlers();
bool interrupt_requested();
void throw_if_interrupted();

}  // namespace miniapp
