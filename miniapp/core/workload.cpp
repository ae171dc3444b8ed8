#include "miniapp/core/workload.hpp"

#include <algorithm>

namespace miniapp {

namespace {
std::vector<std::unique_ptr<Workload>>& registry() {
  static std::vector<std::unique_ptr<Workload>> list;  // holds no Views: safe before initialize
  return list;
}
}  // namespace

const std::vector<std::unique_ptr<Workload>>& workloads() { return registry(); }

const Workload* find_workload(const std::string& name) {
  for (const auto& w : registry())
    if (w->name() == name) return w.get();
  return nullptr;
}

bool register_workload(std::unique_ptr<Workload> w) {
  auto& list = registry();
  list.push_back(std::move(w));
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a->name() < b->name(); });
  return true;
}

}  // namespace miniapp
