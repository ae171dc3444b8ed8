#pragma once
// A workload registers itself once, under its YAML name, from its own folder:
//
//   MINIAPP_REGISTER_WORKLOAD(DistanceWorkload);
//
// W provides: static constexpr const char* name, summary, size_meaning; static
// std::vector<VariantInfo> variants(); struct Params; static Params parse(MapReader&) for its
// own deck keys; static std::vector<std::pair<std::string, std::string>> describe(const Params&)
// listing every parameter with its value in effect (for the resolved deck in the results);
// static std::size_t footprint_bytes(params, size, scalar_bytes) or, where the footprint depends
// on the variant or the space, static Footprint footprint(params, const MeasurementSpec&); and
// template <class Scalar, class Space> class Kernel, constructed as Kernel(params, variant, size),
// meeting the requirements listed in harness.hpp. The registry instantiates the kernel for every
// compiled space and both precisions.

#include "miniapp/core/harness.hpp"
#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/spaces.hpp"

#include <any>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace miniapp {

// Bytes one measurement allocates: in the execution space's memory (mirrored on the host for a
// device space), and on the host only (e.g. an output a kernel streams to the host block by block).
struct Footprint {
  std::size_t space_bytes = 0;
  std::size_t host_only_bytes = 0;
};

template <class W, class = void>
struct has_spec_footprint : std::false_type {};
template <class W>
struct has_spec_footprint<W, std::void_t<decltype(W::footprint(std::declval<const typename W::Params&>(),
                                                                  std::declval<const MeasurementSpec&>()))>>
    : std::true_type {};

struct VariantInfo {
  std::string name;
  std::string summary;
  std::string unavailable_reason;  // empty when the variant can run in this build
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::string size_meaning() const = 0;
  virtual std::vector<VariantInfo> variants() const = 0;
  // Reads the workload's own keys of a case; problems go to the reader's diagnostics.
  virtual std::any parse(MapReader& reader) const = 0;
  virtual std::vector<std::pair<std::string, std::string>> describe(const std::any& params) const = 0;
  virtual Measurement run(const MeasurementSpec& spec, const std::any& params) const = 0;
  // Whether the kernels can generate their inputs in the execution space (deck `generate: device`).
  virtual bool generates_on_device() const = 0;
  // Bytes of all fields of one measurement, in the space's memory (and again on the host for
  // the mirrors of a device space), and bytes held on the host only.
  virtual Footprint footprint(const MeasurementSpec& spec, const std::any& params) const = 0;
};

const std::vector<std::unique_ptr<Workload>>& workloads();
const Workload* find_workload(const std::string& name);
bool register_workload(std::unique_ptr<Workload> w);

template <class W>
class RegisteredWorkload final : public Workload {
 public:
  std::string name() const override { return W::name; }
  std::string summary() const override { return W::summary; }
  std::string size_meaning() const override { return W::size_meaning; }
  std::vector<VariantInfo> variants() const override { return W::variants(); }
  std::any parse(MapReader& reader) const override { return W::parse(reader); }
  std::vector<std::pair<std::string, std::string>> describe(const std::any& params) const override {
    return W::describe(std::any_cast<const typename W::Params&>(params));
  }
  bool generates_on_device() const override {
    using HostSpace = Kokkos::DefaultHostExecutionSpace;
    return miniapp::generates_on_device<typename W::template Kernel<double, HostSpace>, HostSpace>::value;
  }
  Footprint footprint(const MeasurementSpec& spec, const std::any& params) const override {
    const auto& p = std::any_cast<const typename W::Params&>(params);
    if constexpr (has_spec_footprint<W>::value) {
      return W::footprint(p, spec);
    } else {
      const std::size_t scalar = spec.precision == Precision::Float32 ? sizeof(float) : sizeof(double);
      return {W::footprint_bytes(p, spec.size, scalar), 0};
    }
  }

  Measurement run(const MeasurementSpec& spec, const std::any& params) const override {
    const auto& p = std::any_cast<const typename W::Params&>(params);
    Measurement m;
    bool found = false;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (found || space_name<Space>() != spec.space) return;
      found = true;
      m = spec.precision == Precision::Float32 ? run_typed<float, Space>(spec, p) : run_typed<double, Space>(spec, p);
    });
    if (!found) throw std::invalid_argument("execution space '" + spec.space + "' is not compiled into this binary");
    return m;
  }

 private:
  template <class Scalar, class Space>
  static Measurement run_typed(const MeasurementSpec& spec, const typename W::Params& p) {
    // The kernel, and with it every View, lives only for this measurement.
    typename W::template Kernel<Scalar, Space> kernel(p, spec.variant, spec.size);
    return measure(kernel, Space(), spec);
  }
};

#define MINIAPP_REGISTER_WORKLOAD(W)                      \
  [[maybe_unused]] static const bool miniapp_registered_ = \
      ::miniapp::register_workload(std::make_unique<::miniapp::RegisteredWorkload<W>>())

}  // namespace miniapp
