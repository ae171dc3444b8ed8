#pragma once
// The name and version of the results schema, written into every results.json and checked by
// every reader. The schema itself is record/results.schema.json.

namespace miniapp {

inline constexpr const char* kResultsSchema = "kokkos-miniapp-results/1";

}  // namespace miniapp
