// libFuzzer target for the whole deck path a user's file takes before anything runs: YAML text
// -> validated deck -> plan -> the memory footprint of every measurement (no Kokkos kernel runs,
// as in `miniapp --dry-run`). Any input must end in one of two ways: a plan, or at least one
// problem that names its line. A crash, a sanitizer report, a leak, a hang or a third outcome is a
// finding (abort).

#include "miniapp/core/deck.hpp"
#include "miniapp/core/workload.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace miniapp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const DeckResult result = load_deck_text(text, "fuzz.yaml");
  if (result.deck) {
    if (!result.diagnostics.empty()) {
      std::fprintf(stderr, "a deck was accepted with %zu problem(s)\n", result.diagnostics.all().size());
      std::abort();
    }
    for (const MeasurementSpec& m : expand(*result.deck)) {
      const Workload* w = find_workload(m.workload);
      if (w == nullptr) {
        std::fprintf(stderr, "the plan names an unknown workload '%s'\n", m.workload.c_str());
        std::abort();
      }
      (void)w->footprint(m, result.deck->cases[m.case_index].params);
    }
    return 0;
  }
  if (result.diagnostics.empty()) {
    std::fprintf(stderr, "a deck was refused without a problem to show\n");
    std::abort();
  }
  for (const Diagnostic& d : result.diagnostics.all()) {
    if (d.line < 1 || d.column < 1 || d.message.empty()) {
      std::fprintf(stderr, "a problem without its place or message: %s\n", format(d).c_str());
      std::abort();
    }
  }
  return 0;
}
