#pragma once
// A workload's array: the View in the execution space's memory and its host mirror. The
// workload declares which fields are inputs and outputs; only the harness moves them.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/sampling.hpp"
#include "miniapp/core/spaces.hpp"

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace miniapp {

// Where the host mirrors of the Fields built on this thread are allocated: pageable memory (what
// create_mirror_view gives) or page-locked memory the host<->device link reads and writes
// directly. Set for the duration of one kernel's construction by ScopedHostMirrors.
enum class HostMirrors { Pageable, Pinned };

inline HostMirrors& host_mirrors_for_new_fields() {
  thread_local HostMirrors memory = HostMirrors::Pageable;
  return memory;
}

class ScopedHostMirrors {
 public:
  explicit ScopedHostMirrors(HostMirrors memory) : saved_(host_mirrors_for_new_fields()) {
    host_mirrors_for_new_fields() = memory;
  }
  ~ScopedHostMirrors() { host_mirrors_for_new_fields() = saved_; }
  ScopedHostMirrors(const ScopedHostMirrors&) = delete;
  ScopedHostMirrors& operator=(const ScopedHostMirrors&) = delete;

 private:
  HostMirrors saved_;
};

// Page-locked host memory of the compiled device back-end; the plain host space where there is
// none (host spaces' mirrors are their Views, so nothing is ever pinned there).
#if defined(KOKKOS_ENABLE_CUDA)
using PinnedHostMemory = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
using PinnedHostMemory = Kokkos::HIPHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using PinnedHostMemory = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using PinnedHostMemory = Kokkos::HostSpace;
#endif
inline constexpr bool kHasPinnedHostMemory = !std::is_same_v<PinnedHostMemory, Kokkos::HostSpace>;

class Transferable {
 public:
  virtual ~Transferable() = default;
  virtual const std::string& name() const = 0;
  virtual std::size_t bytes() const = 0;
  // True when the mirror is the device allocation itself (a host space): copies move nothing.
  virtual bool mirror_is_alias() const = 0;
  // True when the mirror lies in page-locked host memory (ScopedHostMirrors, device spaces).
  virtual bool mirror_is_pinned() const = 0;
  virtual void copy_to_device() = 0;
  virtual void copy_to_host() = 0;
  // Up to `count` evenly spaced elements of the host mirror, for comparing results across spaces.
  virtual std::vector<double> sample(std::size_t count) const = 0;
};

template <class DataType, class Space>
class Field final : public Transferable {
 public:
  using device_view = Kokkos::View<DataType, Kokkos::LayoutRight, typename Space::memory_space>;
  using host_view = compat::host_mirror_t<device_view>;

  template <class... Extents>
  explicit Field(std::string name, Extents... extents)
      : name_(std::move(name)), device(name_, static_cast<std::size_t>(extents)...), host(make_host_mirror()) {}

  const std::string& name() const override { return name_; }
  std::size_t bytes() const override { return device.span() * sizeof(typename device_view::value_type); }
  bool mirror_is_alias() const override { return host.data() == device.data(); }
  bool mirror_is_pinned() const override { return pinned_.data() != nullptr; }
  void copy_to_device() override { Kokkos::deep_copy(device, host); }
  void copy_to_host() override { Kokkos::deep_copy(host, device); }
  std::vector<double> sample(std::size_t count) const override {
    std::vector<double> out;
    for (std::size_t i : even_sample(host.span(), count)) out.push_back(static_cast<double>(host.data()[i]));
    return out;
  }

 private:
  using value_type = typename device_view::value_type;

  // A mirror of `device`: pageable (create_mirror_view, the device View itself on a host space)
  // or, under ScopedHostMirrors(Pinned) on a device space, a View of the same type over
  // page-locked memory that pinned_ owns (Kokkos' deep_copy then hands the runtime a page-locked
  // pointer, which it copies by DMA directly).
  host_view make_host_mirror() {
    if constexpr (kHasPinnedHostMemory && !is_host_space<Space>()) {
      if (host_mirrors_for_new_fields() == HostMirrors::Pinned) {
        pinned_ = Kokkos::View<value_type*, PinnedHostMemory>(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, name_ + " (pinned mirror)"), device.span());
#if KOKKOS_VERSION >= 50000
        return host_view(Kokkos::view_wrap(pinned_.data()), device.layout());  // no (pointer, layout) in 5
#else
        return host_view(pinned_.data(), device.layout());  // 3.4's view_wrap(pointer) does not compile
#endif
      }
    }
    return Kokkos::create_mirror_view(device);
  }

  std::string name_;
  Kokkos::View<value_type*, PinnedHostMemory> pinned_;  // empty unless the mirror is pinned

 public:
  device_view device;
  host_view host;
};

}  // namespace miniapp
