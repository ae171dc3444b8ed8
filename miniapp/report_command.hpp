#pragma once
// `miniapp report` and `miniapp advise`: from results directories to a report and an answer.
//
// The binary checks the command line and the results directories (each must hold results.json,
// or threads-N/results.json of a thread sweep, of schema kokkos-miniapp-results/1 with at least
// one measurement), then runs scripts/report/report.py, which draws with matplotlib and holds the
// advisor. Exit codes: 0 done, 2 bad input, 3 runtime error (no python3 or matplotlib, output
// not writable).

namespace miniapp {

// argv[1] names a subcommand handled here.
bool is_report_subcommand(int argc, char** argv);

// Runs `miniapp report|advise ...` (argv[1] is the subcommand) and returns the exit code.
int run_report_subcommand(int argc, char** argv);

}  // namespace miniapp
