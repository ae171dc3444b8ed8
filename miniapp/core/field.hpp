#pragma once
// A workload's array: the View in the execution space's memory and its host mirror. The
// workload declares which fields are inputs and outputs; only the harness moves them.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/core/sampling.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace miniapp {

class Transferable {
 public:
  virtual ~Transferable() = default;
  virtual const std::string& name() const = 0;
  virtual std::size_t bytes() const = 0;
  // True when the mirror is the device allocation itself (a host space): copies move nothing.
  virtual bool mirror_is_alias() const = 0;
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
      : name_(std::move(name)),
        device(name_, static_cast<std::size_t>(extents)...),
        host(Kokkos::create_mirror_view(device)) {}

  const std::string& name() const override { return name_; }
  std::size_t bytes() const override { return device.span() * sizeof(typename device_view::value_type); }
  bool mirror_is_alias() const override { return host.data() == device.data(); }
  void copy_to_device() override { Kokkos::deep_copy(device, host); }
  void copy_to_host() override { Kokkos::deep_copy(host, device); }
  std::vector<double> sample(std::size_t count) const override {
    std::vector<double> out;
    for (std::size_t i : even_sample(host.span(), count)) out.push_back(static_cast<double>(host.data()[i]));
    return out;
  }

 private:
  std::string name_;

 public:
  device_view device;
  host_view host;
};

}  // namespace miniapp
