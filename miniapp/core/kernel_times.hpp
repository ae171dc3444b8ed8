#pragma once
// `--kernel-times`: where a phase's time goes, kernel by kernel, with no Kokkos Tools library to
// install. The mini-app sets Kokkos' tool callbacks itself (the interface a library loaded through
// KOKKOS_TOOLS_LIBS uses): every parallel_for, parallel_reduce, parallel_scan and deep_copy is
// timed from its launch to its end, which Kokkos fences while a tool listens, and added to the
// profiling regions open at its launch (<case>/<space>/<policy>/<precision>/<size>, then
// <workload>/<variant>/<phase>: core/harness.hpp). Vendor library calls (cuBLAS, cuSOLVER, LAPACK)
// launch no Kokkos kernel: Kokkos Kernels puts its vendor BLAS calls in regions
// (KokkosBlas::gemm[TPL_BLAS,double], ...) and the mini-app its vendor solver calls (vendor getrf,
// vendor getrs); while the timer runs a region ends with a fence. What a phase spends outside
// every kernel and inner region is host work and launch gaps. The fences slow launch-bound
// phases: the results of such a run say so.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace miniapp::kernel_times {

struct KernelTotal {
  std::string name;  // the kernel's label; deep copies as "deep_copy DST <- SRC"
  std::uint64_t launches = 0;
  double seconds = 0;
};

// One path of nested regions (outermost first; empty: outside every region), with the time
// spent inside it and the kernels launched while it was the innermost open region.
struct RegionTotal {
  std::vector<std::string> path;
  std::uint64_t entries = 0;
  double seconds = 0;
  std::vector<KernelTotal> kernels;  // most seconds first
  double kernel_seconds() const;
};

// Why the timer cannot start, if it cannot: a Kokkos Tools library (KOKKOS_TOOLS_LIBS /
// KOKKOS_PROFILE_LIBRARY) already holds Kokkos' callbacks, and both cannot listen. Kokkos must be
// initialized.
std::optional<std::string> cannot_start();
// Sets the callbacks and starts from nothing; throws std::runtime_error with cannot_start()'s reason.
void start();
// Clears the callbacks (Kokkos stops fencing after kernels); the totals stay readable.
void stop();
bool running();

// The totals so far, regions in the order they were first entered. A region still open counts
// up to now.
std::vector<RegionTotal> totals();

// kernel-times.json: schema "kokkos-miniapp-kernel-times/1", the regions as above.
std::string to_json(const std::vector<RegionTotal>& regions);

// A few lines per phase region whose name ends in "/<phase>": its time, the shares of its largest
// kernels and inner regions (`top` of them), and the share outside all of them.
void print_summary(std::ostream& os, const std::vector<RegionTotal>& regions, const std::string& phase, int top);

}  // namespace miniapp::kernel_times
