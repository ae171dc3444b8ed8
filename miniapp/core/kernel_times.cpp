#include "miniapp/core/kernel_times.hpp"

#include "miniapp/core/json_writer.hpp"
#include "miniapp/core/kokkos_compat.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace miniapp::kernel_times {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Launch {
  std::size_t region;
  std::string name;
  Clock::time_point start;
};

struct State {
  std::mutex mutex;
  bool running = false;
  std::vector<RegionTotal> regions;
  std::map<std::vector<std::string>, std::size_t> region_index;
  std::vector<std::map<std::string, std::size_t>> kernel_index;  // per region
  std::vector<std::string> stack;                                  // open regions, outermost first
  std::vector<Clock::time_point> entered;
  std::unordered_map<std::uint64_t, Launch> launches;  // kernels begun, not ended
  std::vector<Launch> copies;                          // deep copies begun, not ended (they nest)
  std::uint64_t next_id = 0;

  void clear() {
    regions.clear(), region_index.clear(), kernel_index.clear(), stack.clear(), entered.clear();
    launches.clear(), copies.clear();
    next_id = 0;
  }
  std::size_t region_of_stack() {
    const auto [it, added] = region_index.emplace(stack, regions.size());
    if (added) {
      regions.push_back(RegionTotal{stack, 0, 0, {}});
      kernel_index.emplace_back();
    }
    return it->second;
  }
  void add(const Launch& l, Clock::time_point end) {
    RegionTotal& r = regions[l.region];
    const auto [it, added] = kernel_index[l.region].emplace(l.name, r.kernels.size());
    if (added) r.kernels.push_back(KernelTotal{l.name, 0, 0});
    KernelTotal& k = r.kernels[it->second];
    ++k.launches;
    k.seconds += seconds_between(l.start, end);
  }
};

State& state() {
  static State s;
  return s;
}

void on_push(const char* name) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.stack.emplace_back(name);
  s.entered.push_back(Clock::now());
  ++s.regions[s.region_of_stack()].entries;
}

// A region ends when what it enqueued has run: a vendor library call inside it (cuBLAS,
// cuSOLVER) launches no Kokkos kernel, and only this fence waits for it.
void on_pop() {
  Kokkos::fence();
  const Clock::time_point now = Clock::now();
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.stack.empty()) return;  // a region opened before start()
  s.regions[s.region_of_stack()].seconds += seconds_between(s.entered.back(), now);
  s.stack.pop_back();
  s.entered.pop_back();
}

void on_begin(const char* name, const std::uint32_t, std::uint64_t* id) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  *id = s.next_id++;
  s.launches[*id] = Launch{s.region_of_stack(), name, Clock::now()};
}

// Kokkos fences before calling this while a tool listens: the kernel has finished.
void on_end(const std::uint64_t id) {
  const Clock::time_point now = Clock::now();
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.launches.find(id);
  if (it == s.launches.end()) return;
  s.add(it->second, now);
  s.launches.erase(it);
}

void on_begin_copy(Kokkos::Tools::SpaceHandle, const char* dst, const void*, Kokkos::Tools::SpaceHandle,
                   const char* src, const void*, std::uint64_t) {
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.copies.push_back(Launch{s.region_of_stack(), std::string("deep_copy ") + dst + " <- " + src, Clock::now()});
}

// Kokkos does not fence for this callback: a copy enqueued on an instance ends when it is done.
void on_end_copy() {
  Kokkos::fence();
  const Clock::time_point now = Clock::now();
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.copies.empty()) return;
  s.add(s.copies.back(), now);
  s.copies.pop_back();
}

template <class Push, class Pop, class Begin, class End, class BeginCopy, class EndCopy>
void set_callbacks(Push push, Pop pop, Begin begin, End end, BeginCopy begin_copy, EndCopy end_copy) {
  compat::set_region_and_kernel_callbacks(push, pop, begin, end);
  Kokkos::Tools::Experimental::set_begin_deep_copy_callback(begin_copy);
  Kokkos::Tools::Experimental::set_end_deep_copy_callback(end_copy);
}

std::string milliseconds(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(seconds < 0.01 ? 3 : 1) << seconds * 1e3 << " ms";
  return s.str();
}

std::string percent(double part, double whole) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << (whole > 0 ? 100 * part / whole : 0) << "%";
  return s.str();
}

}  // namespace

double RegionTotal::kernel_seconds() const {
  double sum = 0;
  for (const KernelTotal& k : kernels) sum += k.seconds;
  return sum;
}

std::optional<std::string> cannot_start() {
  if (!Kokkos::Tools::profileLibraryLoaded()) return std::nullopt;
  return "--kernel-times: a Kokkos Tools library (KOKKOS_TOOLS_LIBS or KOKKOS_PROFILE_LIBRARY) already listens to "
         "Kokkos' kernels; use one or the other";
}

void start() {
  if (const std::optional<std::string> why = cannot_start()) throw std::runtime_error(*why);
  State& s = state();
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    s.clear();
  }
  s.running = true;
  set_callbacks(on_push, on_pop, on_begin, on_end, on_begin_copy, on_end_copy);
}

void stop() {
  set_callbacks(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  state().running = false;
}

bool running() { return state().running; }

std::vector<RegionTotal> totals() {
  const Clock::time_point now = Clock::now();
  State& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<RegionTotal> out = s.regions;
  // Open regions count up to now.
  std::vector<std::string> path;
  for (std::size_t i = 0; i < s.stack.size(); ++i) {
    path.push_back(s.stack[i]);
    out[s.region_index.at(path)].seconds += seconds_between(s.entered[i], now);
  }
  for (RegionTotal& r : out)
    std::stable_sort(r.kernels.begin(), r.kernels.end(),
                     [](const KernelTotal& a, const KernelTotal& b) { return a.seconds > b.seconds; });
  return out;
}

std::string to_json(const std::vector<RegionTotal>& regions) {
  JsonWriter j;
  j.begin_object();
  j.field("schema", "kokkos-miniapp-kernel-times/1");
  j.field("fenced", "Kokkos fenced after every kernel, deep copy and region: each is timed from its start to its end");
  j.key("regions").begin_array();
  for (const RegionTotal& r : regions) {
    j.begin_object();
    j.array("path", r.path);
    j.field("entries", r.entries);
    j.field("seconds", r.seconds);
    j.field("kernel_seconds", r.kernel_seconds());
    j.key("kernels").begin_array();
    for (const KernelTotal& k : r.kernels) {
      j.begin_object();
      j.field("name", k.name);
      j.field("launches", k.launches);
      j.field("seconds", k.seconds);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

void print_summary(std::ostream& os, const std::vector<RegionTotal>& regions, const std::string& phase, int top) {
  const std::string suffix = "/" + phase;
  struct Item {
    std::string label;
    std::uint64_t count;
    double seconds;
  };
  for (const RegionTotal& r : regions) {
    if (r.path.size() < 2) continue;
    const std::string& name = r.path.back();
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    // Its kernels, and the regions right inside it (vendor library calls) as wholes.
    std::vector<Item> items;
    for (const KernelTotal& k : r.kernels) items.push_back({k.name, k.launches, k.seconds});
    for (const RegionTotal& inner : regions)
      if (inner.path.size() == r.path.size() + 1 && std::equal(r.path.begin(), r.path.end(), inner.path.begin()))
        items.push_back({"region " + inner.path.back(), inner.entries, inner.seconds});
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.seconds > b.seconds; });
    os << "  " << r.path[r.path.size() - 2] << "  " << name << ": " << milliseconds(r.seconds) << " in " << r.entries
       << " entr" << (r.entries == 1 ? "y" : "ies") << "\n";
    double inside = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Item& item = items[i];
      inside += item.seconds;
      if (static_cast<int>(i) < top)
        os << "    " << std::setw(4) << percent(item.seconds, r.seconds) << "  " << item.label << " (" << item.count
           << " time" << (item.count == 1 ? "" : "s") << ", " << milliseconds(item.seconds / item.count) << " each)\n";
    }
    if (static_cast<int>(items.size()) > top) {
      double rest = 0;
      for (std::size_t i = top; i < items.size(); ++i) rest += items[i].seconds;
      os << "    " << std::setw(4) << percent(rest, r.seconds) << "  " << items.size() - top << " other kernel(s) and region(s)\n";
    }
    os << "    " << std::setw(4) << percent(std::max(0.0, r.seconds - inside), r.seconds)
       << "  outside every Kokkos kernel and inner region (host work, launch gaps)\n";
  }
}

}  // namespace miniapp::kernel_times
