#pragma once
// The tables of `miniapp merge` (the command itself: commands/commands.hpp).

#include "miniapp/record/merged.hpp"

#include <iosfwd>

namespace miniapp {

void print_task_summary(std::ostream& os, const MergedResults& merged);
void print_merged_table(std::ostream& os, const MergedResults& merged);
// One column per task: the best median time of each measurement group (case, variant, precision,
// size, input generation) and where it ran, and the ratio of the first task's time to each other's.
void print_side_by_side(std::ostream& os, const MergedResults& merged);

}  // namespace miniapp
