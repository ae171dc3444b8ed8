#pragma once
// A flat RangePolicy index t split into a row t / q and its offset t - row q, by the kernels that
// map one flat range onto rows (distance's direct_flat, dense-blocked's copy_system_flat). A GPU
// divides 64-bit integers several times slower than 32-bit ones, so the division is 32-bit
// wherever the whole range fits.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace miniapp {

class FlatRows {
 public:
  // `count` flat indices (the range's end), q per row
  FlatRows(std::int64_t count, std::int64_t q) : q_(q), narrow_(count <= std::int64_t(0xffffffff)) {}

  KOKKOS_INLINE_FUNCTION std::int64_t row(const std::int64_t t) const {
    return narrow_ ? std::int64_t(static_cast<std::uint32_t>(t) / static_cast<std::uint32_t>(q_)) : t / q_;
  }

 private:
  std::int64_t q_;
  bool narrow_;
};

}  // namespace miniapp
