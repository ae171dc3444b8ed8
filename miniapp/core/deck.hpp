#pragma once
// The input deck: a list of cases, each a workload with its parameters, expanded into the
// measurements to run. Loading validates everything and allocates nothing.

#include "miniapp/core/diagnostics.hpp"
#include "miniapp/core/measurement.hpp"

#include <any>
#include <optional>
#include <string>
#include <vector>

namespace miniapp {

struct CaseSpec {
  int line = 0;  // where the case starts in the deck
  std::string name;
  std::string workload;
  std::vector<std::string> variants;
  std::vector<std::size_t> sizes;
  std::vector<Precision> precisions;
  std::vector<std::string> spaces;
  std::string baseline;
  std::vector<MirrorPolicy> policies;
  std::vector<Generation> generate;
  int warmup = 1;
  int repetitions = 5;
  std::uint64_t seed = 42;
  bool verify = true;
  std::optional<double> tolerance;
  std::any params;  // the workload's own parameters
};

struct Deck {
  std::string file;
  std::string text;  // the deck as read, for the provenance record
  std::string title;
  std::string output_directory;  // empty: the driver picks results/<deck>-<time>
  // Host threads for Kokkos; default: SLURM_CPUS_PER_TASK, else Kokkos' own. More than one count
  // is a thread sweep: one process per count (Kokkos fixes its thread pool at initialization).
  // `threads: powers-of-two` is 1, 2, 4, ... and the CPUs this process may use (powers_of_two_threads).
  std::vector<int> threads;
  bool write_csv = true;
  std::vector<CaseSpec> cases;
};

struct Overrides {
  std::optional<std::vector<std::string>> spaces;
  std::optional<std::vector<std::size_t>> sizes;
};

struct DeckResult {
  std::optional<Deck> deck;
  Diagnostics diagnostics;
};

DeckResult load_deck_text(const std::string& text, const std::string& file, const Overrides& overrides = {});
DeckResult load_deck_file(const std::string& path, const Overrides& overrides = {});

// Every measurement of the deck, in the order they run.
std::vector<MeasurementSpec> expand(const Deck& deck);

// 1, 2, 4, ... below the CPUs this process may use (process_cpus: the OpenMP places where
// there are any, else its affinity mask; at most SLURM_CPUS_PER_TASK), then that count: a deck's
// `threads: powers-of-two`.
std::vector<int> powers_of_two_threads();
// 1, 2, 4, ... below cpus, then cpus itself (at least [1]).
std::vector<int> powers_of_two_up_to(int cpus);

// The run's --case LIST (an array task's measurement group, a weak-scaling deck's rank count):
// comma-separated indexes, names, or name prefixes ending in '*'; keeps those cases of the deck,
// in the deck's order; otherwise says which item matches none.
std::optional<std::string> select_case(Deck& deck, const std::string& selector);

}  // namespace miniapp
