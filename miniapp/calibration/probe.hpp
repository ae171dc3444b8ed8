#pragma once
// The calibration kernels, written once and templated on the execution space, as the workloads'
// kernels are. Each probe checks its own result: a bandwidth from a kernel that computed the wrong
// thing would make every roofline fraction after it wrong.

#include "miniapp/calibration/calibration.hpp"
#include "miniapp/core/interrupt.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/kokkos_kernels_compat.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/matrix/gemm_tiled.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace miniapp::calibration::kernels {

// BabelStream's start values and scalar: after the kernels run, every element of an array holds
// the same value, which the host follows in double precision.
inline constexpr double kStartA = 0.1, kStartB = 0.2, kStartC = 0.0, kScalar = 0.4;

template <class Space, MINIAPP_KERNEL_UNIT>
void fill(const Space& space, const Kokkos::View<double*, typename Space::memory_space>& v, double value) {
  Kokkos::parallel_for(
      "calibration::fill", Kokkos::RangePolicy<Space>(space, 0, v.extent(0)), KOKKOS_LAMBDA(std::int64_t i) { v(i) = value; });
}

// Values a device thread of the stream kernels moves (copy_strided, triad_strided): K, a K-th of
// the array apart, all loaded before any is stored, so that each thread has K loads in flight;
// neighbouring threads still touch neighbouring values in each. matrix::elementwise_strided's
// form: with one value a thread the loads in flight, not the memory, bounded both x * y and this
// probe's copy on the H200, whose triad then took little more than the copy's time for 1.5x its
// bytes (docs/tuning-notes.md, "GPUs, the calibration probe's own copy and triad").
inline constexpr int kDeviceStreamPerThread = 4;

// c = a: two arrays moved. Host spaces: a value an iteration (vectorised).
template <class Space, MINIAPP_KERNEL_UNIT>
void copy_plain(const Space& space, const Kokkos::View<const double*, typename Space::memory_space>& a,
                const Kokkos::View<double*, typename Space::memory_space>& c) {
  Kokkos::parallel_for(
      "calibration::copy", Kokkos::RangePolicy<Space>(space, 0, a.extent(0)), KOKKOS_LAMBDA(std::int64_t i) { c(i) = a(i); });
}

// c = a with K values a thread (devices).
template <int K, class Space, MINIAPP_KERNEL_UNIT>
void copy_strided(const Space& space, const Kokkos::View<const double*, typename Space::memory_space>& a,
                  const Kokkos::View<double*, typename Space::memory_space>& c) {
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const std::int64_t q = (n + K - 1) / K;
  Kokkos::parallel_for(
      "calibration::copy", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
      KOKKOS_LAMBDA(const std::int64_t e) {
        double v[K];
        MINIAPP_UNROLL
        for (int k = 0; k < K; ++k) v[k] = e + k * q < n ? a(e + k * q) : 0.0;
        MINIAPP_UNROLL
        for (int k = 0; k < K; ++k)
          if (e + k * q < n) c(e + k * q) = v[k];
      });
}

// a = b + scalar * c: three arrays moved. Host spaces: a value an iteration.
template <class Space, MINIAPP_KERNEL_UNIT>
void triad_plain(const Space& space, const Kokkos::View<double*, typename Space::memory_space>& a,
                 const Kokkos::View<const double*, typename Space::memory_space>& b,
                 const Kokkos::View<const double*, typename Space::memory_space>& c, double scalar) {
  Kokkos::parallel_for(
      "calibration::triad", Kokkos::RangePolicy<Space>(space, 0, a.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + scalar * c(i); });
}

// a = b + scalar * c with K values a thread (devices).
template <int K, class Space, MINIAPP_KERNEL_UNIT>
void triad_strided(const Space& space, const Kokkos::View<double*, typename Space::memory_space>& a,
                   const Kokkos::View<const double*, typename Space::memory_space>& b,
                   const Kokkos::View<const double*, typename Space::memory_space>& c, double scalar) {
  const auto n = static_cast<std::int64_t>(a.extent(0));
  const std::int64_t q = (n + K - 1) / K;
  Kokkos::parallel_for(
      "calibration::triad", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
      KOKKOS_LAMBDA(const std::int64_t e) {
        double vb[K], vc[K];
        MINIAPP_UNROLL
        for (int k = 0; k < K; ++k) {
          vb[k] = e + k * q < n ? b(e + k * q) : 0.0;
          vc[k] = e + k * q < n ? c(e + k * q) : 0.0;
        }
        MINIAPP_UNROLL
        for (int k = 0; k < K; ++k)
          if (e + k * q < n) a(e + k * q) = vb[k] + scalar * vc[k];
      });
}

// The probe's copy and triad in the space's form. (Dispatched here, not in one function: nvcc
// refuses an extended lambda inside `if constexpr`.)
template <class Space, MINIAPP_KERNEL_UNIT>
void copy(const Space& space, const Kokkos::View<const double*, typename Space::memory_space>& a,
          const Kokkos::View<double*, typename Space::memory_space>& c) {
  if constexpr (is_host_space<Space>()) {
    copy_plain<Space, KernelUnit>(space, a, c);
  } else {
    copy_strided<kDeviceStreamPerThread, Space, KernelUnit>(space, a, c);
  }
}

template <class Space, MINIAPP_KERNEL_UNIT>
void triad(const Space& space, const Kokkos::View<double*, typename Space::memory_space>& a,
           const Kokkos::View<const double*, typename Space::memory_space>& b,
           const Kokkos::View<const double*, typename Space::memory_space>& c, double scalar) {
  if constexpr (is_host_space<Space>()) {
    triad_plain<Space, KernelUnit>(space, a, b, c, scalar);
  } else {
    triad_strided<kDeviceStreamPerThread, Space, KernelUnit>(space, a, b, c, scalar);
  }
}

// The largest |v(i) - expected| over the whole array, reduced where it lives (no copy back).
template <class Space, MINIAPP_KERNEL_UNIT>
double max_deviation(const Space& space, const Kokkos::View<const double*, typename Space::memory_space>& v,
                     double expected) {
  double worst = 0;
  Kokkos::parallel_reduce(
      "calibration::max_deviation", Kokkos::RangePolicy<Space>(space, 0, v.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, double& m) {
        const double d = v(i) > expected ? v(i) - expected : expected - v(i);
        if (d != d) m = 1e300;  // NaN compares false with everything: make it the worst deviation
        else if (d > m) m = d;
      },
      Kokkos::Max<double>(worst));
  space.fence();
  return worst;
}

// Every element of a stream array holds `expected` to a few ulps (b + s*c may be fused into one
// rounding on a device: that is not a wrong value), or ProbeFailed says which array and by how much.
template <class Space, MINIAPP_KERNEL_UNIT>
void check_stream_array(const Space& space, const std::string& where, const std::string& array,
                        const Kokkos::View<const double*, typename Space::memory_space>& v, double expected) {
  const double bound = 8 * std::numeric_limits<double>::epsilon() * std::fabs(expected);
  const double deviation = max_deviation(space, v, expected);
  if (!(deviation <= bound)) {
    std::ostringstream s;
    s << where << ": the stream probe's array " << array << " should hold " << expected
      << " everywhere after the copy and triad kernels; an element differs by " << deviation;
    throw ProbeFailed(s.str());
  }
}

template <class Space, MINIAPP_KERNEL_UNIT>
void empty_kernel(const Space& space) {
  Kokkos::parallel_for("calibration::launch", Kokkos::RangePolicy<Space>(space, 0, 1), KOKKOS_LAMBDA(std::int64_t) {});
}

// GEMM operands with small integers (exact in either precision): a(i,k) in [-4, 4], b(k,j) in [-4, 4].
KOKKOS_INLINE_FUNCTION double gemm_a(std::int64_t i, std::int64_t k) { return double((i * 7 + k * 3) % 9) - 4; }
KOKKOS_INLINE_FUNCTION double gemm_b(std::int64_t k, std::int64_t j) { return double((k * 5 + j * 11) % 9) - 4; }

// The entries of the n x n product that the GEMM probe checks: 16, spread by two primes.
inline std::pair<std::int64_t, std::int64_t> gemm_checked_entry(int s, std::int64_t n) {
  return {(s * std::int64_t{7919}) % n, (s * std::int64_t{104729} + 13) % n};
}
inline constexpr int kGemmCheckedEntries = 16;

// The checked entries of C = A B (the probe's operands, C on the host) against the host's sums.
// The operands are small integers, so every product and every partial sum up to n = 2^16 is exact
// in float32 and float64: any difference is a bug, reported as ProbeFailed naming the entry.
template <class HostMatrix>
void check_gemm_product(const std::string& where, const std::string& precision, const HostMatrix& c) {
  const std::int64_t n = static_cast<std::int64_t>(c.extent(0));
  for (int s = 0; s < kGemmCheckedEntries; ++s) {
    const auto [i, j] = gemm_checked_entry(s, n);
    double expected = 0;
    for (std::int64_t k = 0; k < n; ++k) expected += gemm_a(i, k) * gemm_b(k, j);
    if (static_cast<double>(c(i, j)) != expected) {
      std::ostringstream m;
      m << where << ": the " << precision << " GEMM probe (n = " << n << ") computed C(" << i << "," << j
        << ") = " << static_cast<double>(c(i, j)) << ", the host's exact sum is " << expected;
      throw ProbeFailed(m.str());
    }
  }
}

template <class Space, class Scalar, MINIAPP_KERNEL_UNIT>
void fill_gemm_operands(const Space& space,
                        const Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space>& a,
                        const Kokkos::View<Scalar**, Kokkos::LayoutRight, typename Space::memory_space>& b) {
  const std::int64_t n = static_cast<std::int64_t>(a.extent(0));
  Kokkos::parallel_for(
      "calibration::gemm_operands", Kokkos::RangePolicy<Space>(space, 0, n * n), KOKKOS_LAMBDA(std::int64_t idx) {
        const std::int64_t r = idx / n, c = idx % n;
        a(r, c) = Scalar(gemm_a(r, c));
        b(r, c) = Scalar(gemm_b(r, c));
      });
}

}  // namespace miniapp::calibration::kernels

namespace miniapp::calibration {

template <class Space>
class Prober {
 public:
  using Memory = typename Space::memory_space;
  using Vector = Kokkos::View<double*, Memory>;
  using ConstVector = Kokkos::View<const double*, Memory>;

  Prober(const Space& space, const ProbeSizes& sizes) : space_(space), sizes_(sizes) {}

  SpaceCalibration run() {
    Kokkos::Timer whole;
    SpaceCalibration c;
    c.space = space_name<Space>();
    c.host = is_host_space<Space>();
    std::vector<std::string> checked;
    stream(c, checked);
    throw_if_interrupted();
    launch_latency(c);
    throw_if_interrupted();
    gemm<double>(c, "float64", checked);
    throw_if_interrupted();
    gemm<float>(c, "float32", checked);
    if constexpr (!is_host_space<Space>()) {
      throw_if_interrupted();
      c.link = link(checked);
    }
    c.seconds = whole.seconds();
    std::ostringstream v;
    for (std::size_t i = 0; i < checked.size(); ++i) v << (i ? "; " : "") << checked[i];
    c.verified = v.str();
    return c;
  }

 private:
  template <class Work>
  double timed(Work&& work) {
    space_.fence();
    Kokkos::Timer t;
    work();
    space_.fence();
    return t.seconds();
  }

  void stream(SpaceCalibration& c, std::vector<std::string>& checked) {
    const std::size_t n = sizes_.stream_values;
    Vector a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "calibration::a"), n);
    Vector b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "calibration::b"), n);
    Vector cv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "calibration::c"), n);
    // Filled by the space itself: on host spaces, first touch puts the pages near the threads
    // that will read them.
    kernels::fill(space_, a, kernels::kStartA);
    kernels::fill(space_, b, kernels::kStartB);
    kernels::fill(space_, cv, kernels::kStartC);
    double best_copy = std::numeric_limits<double>::max(), best_triad = best_copy, best_vendor = best_copy;
    double ea = kernels::kStartA, eb = kernels::kStartB, ec = kernels::kStartC;
    for (int r = 0; r < sizes_.repetitions + 1; ++r) {  // the first round warms up
      // c = b through the library's copy first (b never changes, so c's expected value is known),
      // then the project's own kernels overwrite c and a as before.
      const double tv = timed([&] { Kokkos::deep_copy(space_, cv, b); });
      const double tc = timed([&] { kernels::copy(space_, ConstVector(a), cv); });
      ec = ea;
      const double tt = timed([&] { kernels::triad(space_, a, ConstVector(b), ConstVector(cv), kernels::kScalar); });
      ea = eb + kernels::kScalar * ec;
      if (r > 0)
        best_copy = std::min(best_copy, tc), best_triad = std::min(best_triad, tt), best_vendor = std::min(best_vendor, tv);
      throw_if_interrupted();
    }
    // The library's copy checked on its own: c = b, every element.
    Kokkos::deep_copy(space_, cv, b);
    kernels::check_stream_array(space_, c.space, "c (after deep_copy from b)", ConstVector(cv), eb);
    kernels::copy(space_, ConstVector(a), cv);
    ec = ea;
    const double bytes = static_cast<double>(n * sizeof(double));
    c.stream_bytes = n * sizeof(double);
    c.copy_GBps = 2 * bytes / best_copy * 1e-9;
    c.triad_GBps = 3 * bytes / best_triad * 1e-9;
    c.vendor_copy_GBps = 2 * bytes / best_vendor * 1e-9;
    for (auto [name, v, expected] : {std::tuple{"a", a, ea}, std::tuple{"b", b, eb}, std::tuple{"c", cv, ec}})
      kernels::check_stream_array(space_, c.space, name, ConstVector(v), expected);
    checked.push_back("stream arrays (own kernels and deep_copy): every element equals the host's expected value");
  }

  void launch_latency(SpaceCalibration& c) {
    std::vector<double> seconds;
    seconds.reserve(static_cast<std::size_t>(sizes_.launches));
    for (int i = 0; i < sizes_.launches + 10; ++i) {
      const double t = timed([&] { kernels::empty_kernel(space_); });
      if (i >= 10) seconds.push_back(t);
    }
    std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
    c.launch_latency_us = seconds[seconds.size() / 2] * 1e6;
  }

  // KokkosBlas::gemm on Views of this space, as the matrix and distance workloads call it: with
  // the vendor BLAS enabled this is cuBLAS/rocBLAS/host BLAS, else Kokkos Kernels' own kernel.
  // A build without Kokkos Kernels measures the mini-app's gemm-tiled instead, and says so.
  template <class Scalar>
  void gemm(SpaceCalibration& c, const std::string& precision, std::vector<std::string>& checked) {
    using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Memory>;
    using Device = Kokkos::Device<Space, Memory>;
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    using ConstOperand = Kokkos::View<const Scalar**, Kokkos::LayoutRight, Device, Unmanaged>;
    using Result = Kokkos::View<Scalar**, Kokkos::LayoutRight, Device, Unmanaged>;
    int n = 256;
    double seconds = 0;
    Matrix a, b, result;
    for (;;) {
      a = Matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "calibration::gemm_a"), n, n);
      b = Matrix(Kokkos::view_alloc(Kokkos::WithoutInitializing, "calibration::gemm_b"), n, n);
      result = Matrix("calibration::gemm_c", n, n);
      kernels::fill_gemm_operands<Space, Scalar>(space_, a, b);
      auto call = [&] {
        if constexpr (compat::kHasKokkosKernels)
          compat::gemm("N", "N", Scalar(1), ConstOperand(a.data(), n, n), ConstOperand(b.data(), n, n), Scalar(0),
                       Result(result.data(), n, n));
        else
          matrix::gemm_tiled(space_, matrix::default_tiles<Scalar, Space>(n, n, static_cast<int>(space_.concurrency())), Scalar(1), a, b, Scalar(0), result, result);
      };
      timed(call);  // warm-up: library initialisation, the first touch of the result
      seconds = std::numeric_limits<double>::max();
      for (int r = 0; r < 3; ++r) seconds = std::min(seconds, timed(call));
      throw_if_interrupted();
      if (seconds >= sizes_.gemm_target_seconds || 2 * n > sizes_.gemm_max_n) break;
      n *= 2;
    }
    c.gemm_GFLOPs[precision] = 2.0 * n * double(n) * n / seconds * 1e-9;
    c.gemm_n[precision] = n;

    kernels::check_gemm_product(c.space, precision, Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), result));
    checked.push_back(precision + " GEMM" + (compat::kHasKokkosKernels ? "" : " (gemm-tiled: no Kokkos Kernels)") +
                      ": 16 entries equal the host's exact sums");
  }

  // deep_copy between this space's memory and pageable (what the harness's mirrors use) or pinned
  // host memory, each direction, best of the repetitions.
  Link link(std::vector<std::string>& checked) {
    using Pinned = typename compat::pinned_host_memory<Space>::type;
    const std::size_t n = std::max<std::size_t>(1, sizes_.link_bytes / sizeof(double));
    Vector device(Kokkos::view_alloc(Kokkos::WithoutInitializing, "calibration::link_device"), n);
    Kokkos::View<double*, Kokkos::HostSpace> pageable("calibration::link_pageable", n);
    Kokkos::View<double*, Pinned> pinned("calibration::link_pinned", n);
    Kokkos::deep_copy(pageable, 1.5);
    Kokkos::deep_copy(pinned, 2.5);
    auto best = [&](auto&& copy) {
      double t = std::numeric_limits<double>::max();
      for (int r = 0; r < sizes_.repetitions + 1; ++r) {
        const double s = timed(copy);
        if (r > 0) t = std::min(t, s);
      }
      throw_if_interrupted();
      return static_cast<double>(n * sizeof(double)) / t * 1e-9;
    };
    Link l;
    l.pageable_to_device = best([&] { Kokkos::deep_copy(space_, device, pageable); });
    if (kernels::max_deviation(space_, ConstVector(device), 1.5) != 0)
      throw ProbeFailed(space_name<Space>() + ": the pageable host->device copy of the link probe arrived wrong");
    l.pageable_to_host = best([&] { Kokkos::deep_copy(space_, pageable, device); });
    l.pinned_to_device = best([&] { Kokkos::deep_copy(space_, device, pinned); });
    if (kernels::max_deviation(space_, ConstVector(device), 2.5) != 0)
      throw ProbeFailed(space_name<Space>() + ": the pinned host->device copy of the link probe arrived wrong");
    l.pinned_to_host = best([&] { Kokkos::deep_copy(space_, pinned, device); });
    if (pageable(n - 1) != 1.5 || pinned(n - 1) != 2.5)
      throw ProbeFailed(space_name<Space>() + ": the device->host copy of the link probe arrived wrong");
    checked.push_back("link copies: the values arrived");
    return l;
  }

  Space space_;
  ProbeSizes sizes_;
};

}  // namespace miniapp::calibration
