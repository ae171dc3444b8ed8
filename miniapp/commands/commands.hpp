#pragma once
// Every command of the binary, one folder each under miniapp/commands/. main.cpp is the table
// that picks one by argv[1]; the exit codes of each are in its --help and in core/exit_codes.hpp.

namespace miniapp {

// `miniapp [options] DECK.yaml` (commands/run): the whole argv.
int run_deck_command(int argc, char** argv);
// `miniapp report|advise ...` (commands/report): the whole argv, argv[1] naming which.
int run_report_subcommand(int argc, char** argv);
// `miniapp merge DIR...` (commands/merge): argv[0] is "merge".
int run_merge(int argc, char** argv);

namespace submit {
// `miniapp submit` (commands/submit) and `miniapp queue-wait` (commands/queue_wait): argv[0] is
// the subcommand's name.
int run_submit(int argc, char** argv);
int run_queue_wait(int argc, char** argv);
}  // namespace submit

}  // namespace miniapp
