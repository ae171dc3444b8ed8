#pragma once
// The matrix kernels, written once for every execution space: input generation, the elementwise
// operation, and the three GEMM forms (gemm-tiled in gemm_tiled.hpp). Free functions templated on
// the space: CUDA extended lambdas may not live in private member functions.

#include "miniapp/core/host_vector_math.hpp"
#include "miniapp/core/kernel_unit.hpp"
#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/pack16.hpp"
#include "miniapp/core/pow_exp2.hpp"
#include "miniapp/core/random.hpp"
#include "miniapp/core/spaces.hpp"
#include "miniapp/core/unroll.hpp"
#include "miniapp/workloads/matrix/gemm_tiled.hpp"
#include "miniapp/workloads/matrix/params.hpp"

#include "miniapp/core/kokkos_kernels_compat.hpp"

#include <cstdint>
#include <type_traits>

namespace miniapp::matrix {

// Inputs in (0, 1] for the elementwise form: pow(x, y) is defined and finite, as in the seed's
// np.random.rand (which can give 0; 0 ** y is fine but x = 0 makes its relative error meaningless).
KOKKOS_INLINE_FUNCTION double positive_uniform(std::uint64_t seed, std::uint64_t index) {
  return 1.0 - uniform01(seed, index);
}
// GEMM inputs in [-1, 1): sums cancel, as in real data.
KOKKOS_INLINE_FUNCTION double signed_uniform(std::uint64_t seed, std::uint64_t index) {
  return 2.0 * uniform01(seed, index) - 1.0;
}

// Element e of a contiguous View is value offset + e of the stream, on the host or in the space.
template <bool Signed, class View>
void fill_host(const View& out, std::uint64_t seed, std::size_t offset) {
  for (std::size_t e = 0; e < out.span(); ++e)
    out.data()[e] = static_cast<typename View::value_type>(Signed ? signed_uniform(seed, offset + e)
                                                                  : positive_uniform(seed, offset + e));
}

template <bool Signed, class Space, class View, MINIAPP_KERNEL_UNIT>
void fill_device(const Space& space, const View& out, std::uint64_t seed, std::size_t offset) {
  using Scalar = typename View::value_type;
  Scalar* data = out.data();
  Kokkos::parallel_for(
      "matrix::generate", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, out.span()),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const std::uint64_t index = offset + static_cast<std::uint64_t>(e);
        data[e] = static_cast<Scalar>(Signed ? signed_uniform(seed, index) : positive_uniform(seed, index));
      });
}

// pow as every form but elementwise_exp2 computes it: the space's.
struct SpacePow {
  template <class Scalar>
  KOKKOS_INLINE_FUNCTION Scalar operator()(const Scalar a, const Scalar b) const {
    return compat::math::pow(a, b);
  }
};

// pow_exp2's float power, its logarithm's table in the space's memory.
struct Exp2Pow {
  const pow_exp2::LogEntry* table;
  KOKKOS_INLINE_FUNCTION float operator()(const float a, const float b) const { return pow_exp2::pow(table, a, b); }
};

// z = x ** y or x * y in R rounds of K elements a thread, shaped for GPUs: round r of thread e
// takes elements e + (r K + k) q, k < K (q = ceil(total / (K R))), so that neighbouring threads
// touch neighbouring elements in every load and every thread has K loads in flight instead of
// one; each round's loads are issued before the previous round is computed, so that a thread's
// loads are in flight while it computes pow. One round is elementwise_strided, more are
// elementwise_pipelined: the two differ in their kernel's label only. power_of(a, b) is pow.
template <int K, int R, class Space, class View, class Power = SpacePow, MINIAPP_KERNEL_UNIT>
void elementwise_rounds(const char* label, const Space& space, Operation op, const View& x, const View& y,
                        const View& z, const Power power_of = {}) {
  static_assert(K >= 1 && K <= 16 && R >= 1 && R <= 16 && K * R <= 64, "elements a round, rounds");
  using Scalar = typename View::value_type;
  const Scalar* xs = x.data();
  const Scalar* ys = y.data();
  Scalar* zs = z.data();
  const auto total = static_cast<std::int64_t>(z.span());
  const std::int64_t q = (total + K * R - 1) / (K * R);
  const bool power = op == Operation::Power;
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q),
      KOKKOS_LAMBDA(const std::int64_t e) {
        Scalar a[R][K], b[R][K];  // every round unrolled: registers
        MINIAPP_UNROLL
        for (int k = 0; k < K; ++k) {
          const std::int64_t i = e + k * q;
          a[0][k] = i < total ? xs[i] : Scalar(1);
          b[0][k] = i < total ? ys[i] : Scalar(1);
        }
        MINIAPP_UNROLL
        for (int r = 0; r < R; ++r) {
          // round r + 1's loads, then round r's values: the loads precede stores that may alias
          // them, so the compiler keeps them in this order
          if (r + 1 < R) {
            MINIAPP_UNROLL
            for (int k = 0; k < K; ++k) {
              const std::int64_t i = e + ((r + 1) * K + k) * q;
              a[r + 1][k] = i < total ? xs[i] : Scalar(1);
              b[r + 1][k] = i < total ? ys[i] : Scalar(1);
            }
          }
          MINIAPP_UNROLL
          for (int k = 0; k < K; ++k) {
            const std::int64_t i = e + (r * K + k) * q;
            if (i < total) zs[i] = power ? power_of(a[r][k], b[r][k]) : a[r][k] * b[r][k];
          }
        }
      });
}

// One round of K elements a thread: every load, then every value. `elementwise` runs it with K =
// kDeviceElementsPerThread on device spaces: with one element a thread the loads in flight, not
// the memory, bounded `x * y` on the H100 and H200 alike, and with four it reaches the vendor's
// device copy, whichever Kokkos (docs/tuning-notes.md, "GPUs, elementwise"). Benchmarks
// matrix-elementwise-*-k<K> time each K beside the workload.
template <int K, class Space, class View, MINIAPP_KERNEL_UNIT>
void elementwise_strided(const Space& space, Operation op, const View& x, const View& y, const View& z) {
  static_assert(K >= 1 && K <= 16, "elements per thread");
  elementwise_rounds<K, 1, Space, View, SpacePow, KernelUnit>("matrix::elementwise-strided", space, op, x, y, z);
}

// Elements per thread of `elementwise` on device spaces (elementwise_strided).
inline constexpr int kDeviceElementsPerThread = 4;

// R >= 2 rounds, to overlap pow's ~80 instructions an element with the next round's loads where
// `x ** y` stops short of the vendor copy with K = 4 and 8 alike. Measured
// (matrix-elementwise-power-pipelined-*), the rounds took what the strided form takes, and pow
// alone nearly as much: pow's instructions bound it, so `elementwise` keeps the strided form.
template <int K, int R, class Space, class View, MINIAPP_KERNEL_UNIT>
void elementwise_pipelined(const Space& space, Operation op, const View& x, const View& y, const View& z) {
  static_assert(K >= 1 && K <= 8 && R >= 2 && R <= 16, "elements a round, rounds (one: strided)");
  elementwise_rounds<K, R, Space, View, SpacePow, KernelUnit>("matrix::elementwise-pipelined", space, op, x, y, z);
}

// z = x ** y or x * y in 16-byte packs (Pack16: 4 float32 or 2 float64 values), prepared for
// devices: thread e takes packs e + p q, p < P (q = ceil(packs / P)), so neighbouring threads
// touch neighbouring packs, and loads each pack of x and y and stores each of z as one vector
// access, where elementwise_strided issues two loads and a store an element, each with its own
// 64-bit address: fewer instructions beside pow, which bounds x ** y on the GPUs measured
// (docs/tuning-notes.md). Thread 0 also takes the elements past the last whole pack. Arrays not
// all 16-byte aligned take elementwise_strided's form with the same elements a thread. The same
// power_of(a, b) and a * b as every form: the same values.
template <int P, class Space, class View, class Power = SpacePow, MINIAPP_KERNEL_UNIT>
void elementwise_packs(const Space& space, Operation op, const View& x, const View& y, const View& z,
                       const Power power_of = {}) {
  using Scalar = typename View::value_type;
  using Pack = Pack16<Scalar>;
  constexpr int W = Pack::kValues;
  static_assert(P >= 1 && P <= 4, "packs a thread");
  const auto aligned = [](const Scalar* data) { return reinterpret_cast<std::uintptr_t>(data) % 16 == 0; };
  if (!aligned(x.data()) || !aligned(y.data()) || !aligned(z.data()))
    return elementwise_rounds<P * W, 1, Space, View, Power, KernelUnit>("matrix::elementwise-packs", space, op, x, y,
                                                                        z, power_of);
  const Scalar* xs = x.data();
  const Scalar* ys = y.data();
  Scalar* zs = z.data();
  const auto total = static_cast<std::int64_t>(z.span());
  const std::int64_t packs = total / W, q = (packs + P - 1) / P;
  const bool power = op == Operation::Power;
  Kokkos::parallel_for(
      "matrix::elementwise-packs", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, q > 0 ? q : 1),
      KOKKOS_LAMBDA(const std::int64_t e) {
        Pack a[P], b[P];
        MINIAPP_UNROLL
        for (int p = 0; p < P; ++p) {
          if (e + p * q < packs) {
            a[p] = load_pack<Space>(xs + (e + p * q) * W);
            b[p] = load_pack<Space>(ys + (e + p * q) * W);
          }
        }
        MINIAPP_UNROLL
        for (int p = 0; p < P; ++p) {
          if (e + p * q >= packs) continue;
          Pack c;
          MINIAPP_UNROLL
          for (int w = 0; w < W; ++w) c.v[w] = power ? power_of(a[p].v[w], b[p].v[w]) : a[p].v[w] * b[p].v[w];
          store_pack<Space>(zs + (e + p * q) * W, c);
        }
        if (e == 0)
          for (std::int64_t i = packs * W; i < total; ++i) zs[i] = power ? power_of(xs[i], ys[i]) : xs[i] * ys[i];
      });
}

// float x ** y as elementwise_strided<K>, pow by pow_exp2 (its table from pow_exp2::log_table on
// this space). Prepared for devices (matrix-elementwise-power-exp2-k4): the vendor's pow bounds
// elementwise_strided (pow alone takes nearly all of its time), and this one issues about a quarter fewer
// instructions an element (docs/tuning-notes.md); `elementwise` keeps the space's pow until it is
// measured.
template <int K, class Space, class View, class Table, MINIAPP_KERNEL_UNIT>
void elementwise_exp2(const Space& space, const View& x, const View& y, const View& z, const Table& table) {
  static_assert(std::is_same<typename View::value_type, float>::value, "pow_exp2 is a float power");
  elementwise_rounds<K, 1, Space, View, Exp2Pow, KernelUnit>("matrix::elementwise-exp2", space, Operation::Power, x,
                                                              y, z, Exp2Pow{table.data()});
}

// Elements one host thread's vector pow handles per iteration: large enough that the loop's
// overhead vanishes, small enough that two threads share the work evenly.
inline constexpr std::int64_t kHostPowChunk = 16384;

// z = x ** y or x * y over contiguous arrays on a host space: one flat loop, no index arithmetic
// per element, so it vectorizes. pow goes through libmvec where the build has it
// (host_vector_math.hpp): the compilers vectorise no pow call without -ffast-math.
template <class Space, class View, MINIAPP_KERNEL_UNIT>
void elementwise_host(const Space& space, Operation op, const View& x, const View& y, const View& z) {
  using Scalar = typename View::value_type;
  const Scalar* xs = x.data();
  const Scalar* ys = y.data();
  Scalar* zs = z.data();
  const auto total = static_cast<std::int64_t>(z.span());
  using Policy = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
  if (op == Operation::Power) {
#if MINIAPP_HOST_VECTOR_POW
    Kokkos::parallel_for(
        "matrix::elementwise-power", Policy(space, 0, (total + kHostPowChunk - 1) / kHostPowChunk),
        KOKKOS_LAMBDA(const std::int64_t c) {
          const std::int64_t begin = c * kHostPowChunk, end = begin + kHostPowChunk < total ? begin + kHostPowChunk : total;
          simd::pow(xs + begin, ys + begin, zs + begin, static_cast<std::size_t>(end - begin));
        });
#else
    Kokkos::parallel_for(
        "matrix::elementwise-power", Policy(space, 0, total),
        KOKKOS_LAMBDA(const std::int64_t e) { zs[e] = compat::math::pow(xs[e], ys[e]); });
#endif
  } else {
    Kokkos::parallel_for(
        "matrix::elementwise-multiply", Policy(space, 0, total), KOKKOS_LAMBDA(const std::int64_t e) { zs[e] = xs[e] * ys[e]; });
  }
}

// z = x ** y or x * y: the host loops on host spaces, kDeviceElementsPerThread elements per
// thread on devices. (Two functions, not one: nvcc refuses an extended lambda inside
// `if constexpr`, and device spaces then compile no host loop.)
template <class Space, class View, MINIAPP_KERNEL_UNIT>
void elementwise(const Space& space, Operation op, const View& x, const View& y, const View& z) {
  if constexpr (is_host_space<Space>()) {
    elementwise_host(space, op, x, y, z);
  } else {
    elementwise_strided<kDeviceElementsPerThread>(space, op, x, y, z);
  }
}

// One thread per element of C; beta = 0 reads no C0, as in BLAS.
template <class Space, class Scalar, class AView, class BView, class C0View, class CView, MINIAPP_KERNEL_UNIT>
void gemm_naive(const Space& space, Scalar alpha, const AView& A, const BView& B, Scalar beta, const C0View& C0,
                const CView& C) {
  const bool read_c0 = beta != Scalar(0);
  const auto K = static_cast<std::int64_t>(A.extent(1));
  const auto M = static_cast<std::int64_t>(C.extent(0)), N = static_cast<std::int64_t>(C.extent(1));
  Kokkos::parallel_for(
      "matrix::gemm-naive", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {0, 0}, {M, N}),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        Scalar sum = 0;
        for (std::int64_t k = 0; k < K; ++k) sum += A(i, k) * B(k, j);
        C(i, j) = alpha * sum + (read_c0 ? beta * C0(i, j) : Scalar(0));
      });
}

// KokkosBlas::gemm, on Views of Device<Space, memory> so that Kokkos Kernels runs on this space
// (and, with the vendor BLAS enabled, matches its host / cuBLAS / rocBLAS specializations for
// LayoutRight). gemm updates C in place: starting from C0 keeps the inputs unchanged between
// iterations.
template <class Space, class Scalar, class View>
void gemm_kokkos_kernels(const Space& space, Scalar alpha, const View& a, const View& b, Scalar beta, const View& c0,
                         const View& c) {
  using Device = Kokkos::Device<Space, typename Space::memory_space>;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using ConstMatrix = Kokkos::View<const Scalar**, Kokkos::LayoutRight, Device, Unmanaged>;
  using MutableMatrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, Device, Unmanaged>;
  const ConstMatrix A(a.data(), a.extent(0), a.extent(1));
  const ConstMatrix B(b.data(), b.extent(0), b.extent(1));
  const MutableMatrix C(c.data(), c.extent(0), c.extent(1));
  if (beta != Scalar(0)) Kokkos::deep_copy(space, c, c0);
  compat::gemm("N", "N", alpha, A, B, beta, C);
}

}  // namespace miniapp::matrix
