// A Kokkos Tools library for the tests and docs/profiling.md: at finalize it writes the tree of
// regions and kernels it saw, each node with its count, in the order first seen, to the file named
// by MINIAPP_REGION_TREE_OUTPUT (standard error when unset). Loaded by Kokkos through
// KOKKOS_PROFILE_LIBRARY (3.4) or KOKKOS_TOOLS_LIBS (3.7 on), as kokkos-tools' own tools are; the
// space-time-stack tool of kokkos-tools gives the same tree with times.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

struct Node {
  std::string label;  // "region NAME" or "kernel NAME"
  long count = 0;
  std::vector<std::size_t> children;  // indices into nodes, in the order first seen
  std::map<std::string, std::size_t> by_label;
};

std::vector<Node> nodes(1);          // nodes[0]: the root
std::vector<std::size_t> open{0};    // the regions entered and not left, innermost last

std::size_t child(std::size_t parent, const std::string& label) {
  const auto found = nodes[parent].by_label.find(label);
  if (found != nodes[parent].by_label.end()) return found->second;
  nodes.push_back(Node{label});
  const std::size_t index = nodes.size() - 1;
  nodes[parent].children.push_back(index);
  nodes[parent].by_label.emplace(label, index);
  return index;
}

void kernel(const char* name) { ++nodes[child(open.back(), std::string("kernel ") + name)].count; }

void write(std::FILE* out, std::size_t node, int depth) {
  for (std::size_t c : nodes[node].children) {
    std::fprintf(out, "%*s%s x%ld\n", 2 * depth, "", nodes[c].label.c_str(), nodes[c].count);
    write(out, c, depth + 1);
  }
}

}  // namespace

extern "C" {

void kokkosp_init_library(const int, const std::uint64_t, const std::uint32_t, void*) {}

void kokkosp_finalize_library() {
  const char* path = std::getenv("MINIAPP_REGION_TREE_OUTPUT");
  std::FILE* out = path ? std::fopen(path, "w") : stderr;
  if (!out) {
    std::fprintf(stderr, "region_tree: cannot write %s\n", path);
    return;
  }
  write(out, 0, 0);
  if (out != stderr) std::fclose(out);
}

void kokkosp_push_profile_region(const char* name) {
  const std::size_t node = child(open.back(), std::string("region ") + name);
  ++nodes[node].count;
  open.push_back(node);
}

void kokkosp_pop_profile_region() {
  if (open.size() > 1) open.pop_back();
}

void kokkosp_begin_parallel_for(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = 0;
  kernel(name);
}
void kokkosp_end_parallel_for(const std::uint64_t) {}
void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = 0;
  kernel(name);
}
void kokkosp_end_parallel_reduce(const std::uint64_t) {}
void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = 0;
  kernel(name);
}
void kokkosp_end_parallel_scan(const std::uint64_t) {}

}  // extern "C"
