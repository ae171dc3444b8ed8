#pragma once
// The console table of one case of a run.

#include "miniapp/record/record.hpp"

#include <cstddef>
#include <iosfwd>

namespace miniapp {

void print_case_table(std::ostream& os, const RunRecord& run, std::size_t case_index);

}  // namespace miniapp
