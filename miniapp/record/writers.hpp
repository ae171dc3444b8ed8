#pragma once
// The files of a run: results.json (schema record/schema.hpp), results.csv (one row per
// repetition) and benchmark.json (Google Benchmark's layout, for compare.py).

#include "miniapp/record/record.hpp"

#include <string>

namespace miniapp {

std::string to_json(const RunRecord& run);
std::string to_csv(const RunRecord& run);
// Google Benchmark's JSON layout, one benchmark per measurement, for compare.py.
std::string to_benchmark_json(const RunRecord& run);

}  // namespace miniapp
