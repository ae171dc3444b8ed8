#pragma once
// The job subcommands of the mini-app: `miniapp submit`, `miniapp queue-wait` (and `miniapp
// merge`, miniapp/merge.hpp). Each takes its own argv, argv[0] being the subcommand's name.

#include "miniapp/core/deck.hpp"

#include <optional>
#include <string>

namespace miniapp::submit {

int run_submit(int argc, char** argv);
int run_queue_wait(int argc, char** argv);

// The run's --case N|NAME (an array task's measurement group): keeps that case of the deck only;
// otherwise says why not.
std::optional<std::string> select_case(Deck& deck, const std::string& selector);

}  // namespace miniapp::submit
