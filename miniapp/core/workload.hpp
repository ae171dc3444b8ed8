#pragma once
// The workload contract. A workload is a struct W in its own folder, registered once under its
// YAML name:
//
//   MINIAPP_REGISTER_WORKLOAD(DistanceWorkload);
//
// W provides
//   static constexpr const char* name, summary, size_meaning;   the deck's name, --list's lines
//   struct Params;                          default-constructible: every deck key has a default
//   static std::vector<VariantInfo> variants();   read from its variant table (VariantTable)
//   static Params parse(MapReader&);        its own deck keys; problems go to the diagnostics
//   static std::vector<std::pair<std::string, std::string>> describe(const Params&);
//                                           every parameter with the value in effect
//   static Footprint footprint(const Params&, const MeasurementSpec&);
//                                           bytes one measurement allocates, verification included
//   template <class Scalar, class Space> Kernel   (a class, or KernelChoice of one class per group
//                                           of variants that hold the same state) constructed as
//                                           Kernel(params, variant, size), providing
//       inputs(), outputs() -> std::vector<Transferable*>
//       generate_inputs(seed)               fills the host mirrors of the inputs
//       generate_inputs_on_device(space, seed)   optional: the same values, made in the space
//       compute(space)                      enqueues the work; never fences, times or copies
//       work() -> WorkEstimate
//       verify(std::optional<double> tolerance) -> Verification   against an independent
//                                           reference, reading the host mirrors
// and optionally
//   Kernel(params, variant, size, ranks::Slice)   the constructor of a workload split across MPI
//                                           ranks: this rank's part only (its own work(), its
//                                           own verify()); without it a run of more than one
//                                           rank refuses the workload
//   static constexpr const char* ranks_split   how it splits, for --list
//   Kernel::exchanges_during_compute(), take_exchange_seconds()   a kernel whose compute calls
//                                           collectives (harness.hpp)
//   static std::optional<std::string> refuse(const Params&, const MeasurementSpec&);
//                                           a limit known before anything is allocated: why the
//                                           measurement cannot run (the deck is then refused
//                                           before the run instead of failing in the middle)
//
// The registration checks all of this at compile time. The kernels are instantiated once per
// (workload, compiled space), both precisions, each in a compile unit of its own
// (workload_instance.hpp). docs/adding-a-workload.md walks through the smallest workload.

#include "miniapp/core/map_reader.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/core/spaces.hpp"

#include <any>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace miniapp {

class Transferable;

// Bytes one measurement allocates: in the execution space's memory (mirrored on the host for a
// device space), and on the host only (an output a kernel streams to the host block by block,
// what verification allocates).
struct Footprint {
  std::size_t space_bytes = 0;
  std::size_t host_only_bytes = 0;
};

struct VariantInfo {
  std::string name;
  std::string summary;
  std::string unavailable_reason;  // empty when the variant can run in this build
};

// A workload's variants, declared once: the id its code switches on, and what --list, parsing
// and the footprint read.
template <class Id>
struct VariantRow {
  Id id;
  std::string name;
  std::string summary;
  std::string unavailable_reason = "";  // empty when the variant can run in this build
};

template <class Id>
using VariantTable = std::vector<VariantRow<Id>>;

template <class Id>
std::vector<VariantInfo> variant_infos(const VariantTable<Id>& table) {
  std::vector<VariantInfo> infos;
  for (const VariantRow<Id>& row : table) infos.push_back({row.name, row.summary, row.unavailable_reason});
  return infos;
}

// The id of a variant the deck names; the deck has been checked against the table already, so an
// unknown name is a programming error.
template <class Id>
Id variant_id(const VariantTable<Id>& table, const std::string& name, const std::string& workload) {
  for (const VariantRow<Id>& row : table)
    if (row.name == name) return row.id;
  throw std::invalid_argument(workload + ": unknown variant '" + name + "'");
}

// Whether `name` is the variant `id` (false for a name the table does not have).
template <class Id>
bool is_variant(const VariantTable<Id>& table, const std::string& name, Id id) {
  for (const VariantRow<Id>& row : table)
    if (row.name == name) return row.id == id;
  return false;
}

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
  // Why the measurement cannot run, where a limit says so before anything is allocated (e.g. the
  // team scratch a variant needs); nothing when it can.
  virtual std::optional<std::string> refuse(const MeasurementSpec& spec, const std::any& params) const = 0;
  // Whether a measurement can be split across MPI ranks (the kernel takes a ranks::Slice).
  virtual bool splits_across_ranks() const = 0;
  // How it is split (W::ranks_split, optional): what each rank holds, what the ranks exchange.
  virtual std::string ranks_split() const = 0;
};

const std::vector<std::unique_ptr<Workload>>& workloads();
const Workload* find_workload(const std::string& name);
bool register_workload(std::unique_ptr<Workload> w);

// The kernels of workload W on one space, both precisions: defined in workload_instance.hpp and
// instantiated in a compile unit of their own per compiled space (CMake generates them).
template <class W, class Space>
struct Instances {
  static Measurement run(const MeasurementSpec& spec, const typename W::Params& params);
  static bool generates_on_device();
};

namespace contract {
template <class W, class = void>
struct has_names : std::false_type {};
template <class W>
struct has_names<W, std::void_t<decltype(std::string(W::name), std::string(W::summary), std::string(W::size_meaning))>>
    : std::true_type {};

template <class W, class = void>
struct has_params : std::false_type {};
template <class W>
struct has_params<W, std::void_t<typename W::Params>> : std::is_default_constructible<typename W::Params> {};

template <class W, class = void>
struct has_variants : std::false_type {};
template <class W>
struct has_variants<W, std::void_t<decltype(W::variants())>>
    : std::is_same<decltype(W::variants()), std::vector<VariantInfo>> {};

template <class W, class = void>
struct has_parse : std::false_type {};
template <class W>
struct has_parse<W, std::void_t<decltype(W::parse(std::declval<MapReader&>()))>>
    : std::is_same<decltype(W::parse(std::declval<MapReader&>())), typename W::Params> {};

template <class W, class = void>
struct has_describe : std::false_type {};
template <class W>
struct has_describe<W, std::void_t<decltype(W::describe(std::declval<const typename W::Params&>()))>>
    : std::is_convertible<decltype(W::describe(std::declval<const typename W::Params&>())),
                          std::vector<std::pair<std::string, std::string>>> {};

template <class W, class = void>
struct has_footprint : std::false_type {};
template <class W>
struct has_footprint<W, std::void_t<decltype(W::footprint(std::declval<const typename W::Params&>(),
                                                          std::declval<const MeasurementSpec&>()))>>
    : std::is_same<decltype(W::footprint(std::declval<const typename W::Params&>(),
                                         std::declval<const MeasurementSpec&>())),
                   Footprint> {};

template <class W, class = void>
struct has_refuse : std::false_type {};
template <class W>
struct has_refuse<W, std::void_t<decltype(W::refuse(std::declval<const typename W::Params&>(),
                                                    std::declval<const MeasurementSpec&>()))>>
    : std::is_convertible<decltype(W::refuse(std::declval<const typename W::Params&>(),
                                             std::declval<const MeasurementSpec&>())),
                          std::optional<std::string>> {};

template <class W, class = void>
struct has_ranks_split : std::false_type {};
template <class W>
struct has_ranks_split<W, std::void_t<decltype(std::string(W::ranks_split))>> : std::true_type {};

template <class W, class Space, class = void>
struct has_kernel : std::false_type {};
template <class W, class Space>
struct has_kernel<W, Space, std::void_t<typename W::template Kernel<double, Space>>>
    : std::is_constructible<typename W::template Kernel<double, Space>, const typename W::Params&, const std::string&,
                            std::size_t> {};

// Kernel(params, variant, size, slice): the kernel computes one rank's part.
template <class W, class Scalar, class Space>
inline constexpr bool splits_across_ranks =
    std::is_constructible_v<typename W::template Kernel<Scalar, Space>, const typename W::Params&, const std::string&,
                            std::size_t, const ranks::Slice&>;

template <class K, class Space, class = void>
struct has_kernel_members : std::false_type {};
template <class K, class Space>
struct has_kernel_members<
    K, Space,
    std::void_t<decltype(std::declval<K&>().inputs(), std::declval<K&>().outputs(),
                         std::declval<K&>().generate_inputs(std::uint64_t{}),
                         std::declval<K&>().compute(std::declval<const Space&>()), std::declval<const K&>().work(),
                         std::declval<const K&>().verify(std::optional<double>{}))>>
    : std::integral_constant<bool, std::is_same_v<decltype(std::declval<K&>().inputs()), std::vector<Transferable*>> &&
                                       std::is_same_v<decltype(std::declval<K&>().outputs()), std::vector<Transferable*>> &&
                                       std::is_same_v<decltype(std::declval<const K&>().work()), WorkEstimate> &&
                                       std::is_same_v<decltype(std::declval<const K&>().verify(std::optional<double>{})),
                                                      Verification>> {};

// Every requirement of the contract above, each with its own message.
template <class W>
constexpr bool check() {
  static_assert(has_names<W>::value, "W::name, W::summary and W::size_meaning must be static strings");
  static_assert(has_params<W>::value, "W::Params must be a default-constructible struct (every deck key has a default)");
  if constexpr (has_params<W>::value) {
    static_assert(has_variants<W>::value, "W::variants() must return std::vector<VariantInfo> (from its VariantTable)");
    static_assert(has_parse<W>::value, "W::parse(MapReader&) must return W::Params");
    static_assert(has_describe<W>::value,
                  "W::describe(const Params&) must return std::vector<std::pair<std::string, std::string>>");
    static_assert(has_footprint<W>::value, "W::footprint(const Params&, const MeasurementSpec&) must return Footprint");
    using Host = Kokkos::DefaultHostExecutionSpace;
    static_assert(has_kernel<W, Host>::value,
                  "W::Kernel<Scalar, Space> must be constructible as Kernel(const Params&, const std::string& variant, "
                  "std::size_t size)");
    if constexpr (has_kernel<W, Host>::value)
      static_assert(has_kernel_members<typename W::template Kernel<double, Host>, Host>::value,
                    "Kernel<Scalar, Space> must provide inputs()/outputs() (std::vector<Transferable*>), "
                    "generate_inputs(seed), compute(space), work() (WorkEstimate) and verify(tolerance) (Verification)");
  }
  return true;
}
}  // namespace contract

template <class W>
class RegisteredWorkload final : public Workload {
  static_assert(contract::check<W>());

 public:
  using Params = typename W::Params;

  std::string name() const override { return W::name; }
  std::string summary() const override { return W::summary; }
  std::string size_meaning() const override { return W::size_meaning; }
  std::vector<VariantInfo> variants() const override { return W::variants(); }
  std::any parse(MapReader& reader) const override { return W::parse(reader); }
  std::vector<std::pair<std::string, std::string>> describe(const std::any& params) const override {
    return W::describe(std::any_cast<const Params&>(params));
  }
  bool generates_on_device() const override { return Instances<W, FirstCompiledSpace>::generates_on_device(); }
  Footprint footprint(const MeasurementSpec& spec, const std::any& params) const override {
    return W::footprint(std::any_cast<const Params&>(params), spec);
  }
  std::optional<std::string> refuse(const MeasurementSpec& spec, const std::any& params) const override {
    if (spec.ranks > 1 && !splits_across_ranks())
      return std::string("the ") + W::name + " workload is not split across MPI ranks; run it with one rank";
    if constexpr (contract::has_refuse<W>::value) return W::refuse(std::any_cast<const Params&>(params), spec);
    else return std::nullopt;
  }
  bool splits_across_ranks() const override {
    return contract::splits_across_ranks<W, double, Kokkos::DefaultHostExecutionSpace>;
  }
  std::string ranks_split() const override {
    if constexpr (contract::has_ranks_split<W>::value) return W::ranks_split;
    else return "";
  }

  Measurement run(const MeasurementSpec& spec, const std::any& params) const override {
    const auto& p = std::any_cast<const Params&>(params);
    Measurement m;
    bool found = false;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (found || space_name<Space>() != spec.space) return;
      found = true;
      m = Instances<W, Space>::run(spec, p);
    });
    if (!found) throw std::invalid_argument("execution space '" + spec.space + "' is not compiled into this binary");
    return m;
  }
};

// The kernels of a registered workload are instantiated in the units CMake generates, one per
// compiled space (cmake/MiniappWorkloads.cmake); the registration only declares them.
#define MINIAPP_EXTERN_INSTANCES(W, Space) extern template struct ::miniapp::Instances<W, Space>;
// MINIAPP_FOR_EACH_SPACE comes with the table of spaces (miniapp/space_table.hpp, via spaces.hpp).

}  // namespace miniapp

// The flag's name is unique per use (__COUNTER__), so that two registrations can share a unit:
// the device compile checks merge sources into unity units.
#define MINIAPP_JOIN_(a, b) a##b
#define MINIAPP_JOIN(a, b) MINIAPP_JOIN_(a, b)
#define MINIAPP_REGISTER_WORKLOAD(W)                  \
  MINIAPP_FOR_EACH_SPACE(MINIAPP_EXTERN_INSTANCES, W) \
  [[maybe_unused]] static const bool MINIAPP_JOIN(miniapp_registered_, __COUNTER__) = \
      ::miniapp::register_workload(std::make_unique<::miniapp::RegisteredWorkload<W>>())
