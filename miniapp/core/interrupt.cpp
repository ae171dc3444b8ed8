#include "miniapp/core/interrupt.hpp"

#include <csignal>
#include <string>

namespace miniapp {
namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }
}  // namespace

Interrupted::Interrupted(int sig)
    : std::runtime_error("interrupted by signal " + std::to_string(sig)), signal_number(sig) {}

void install_interrupt_handlers() {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
}

bool interrupt_requested() { return g_signal != 0; }

int pending_signal() { return g_signal; }

void throw_if_interrupted() {
  if (g_signal != 0) throw Interrupted(g_signal);
}

void clear_interrupt_request() { g_signal = 0; }

}  // namespace miniapp
