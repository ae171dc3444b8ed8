#pragma once
// A workload whose variants hold different state has one class per group of variants (matrix:
// elementwise and GEMM; solver: batched and dense-blocked). Its Kernel is then
// KernelChoice<ClassA, ClassB>: the class that runs the variant, chosen at construction (each
// class's static runs(variant) says which it runs), every call passed on to it. Where a class
// takes a ranks::Slice (it splits across MPI ranks), so does the choice; a class that does not is
// then built only for one rank.

#include "miniapp/core/field.hpp"
#include "miniapp/core/harness.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace miniapp {

template <class Space, class... Kernels>
class KernelChoice {
 public:
  template <class Params>
  KernelChoice(const Params& p, const std::string& variant, std::size_t size)
      : chosen_(make<0>(p, variant, size, ranks::Slice{})) {}
  template <class Params, std::enable_if_t<(std::is_constructible_v<Kernels, const Params&, const std::string&,
                                                                    std::size_t, const ranks::Slice&> ||
                                            ...),
                                           int> = 0>
  KernelChoice(const Params& p, const std::string& variant, std::size_t size, const ranks::Slice& slice)
      : chosen_(make<0>(p, variant, size, slice)) {}

  std::vector<Transferable*> inputs() { return visit([](auto& k) { return k.inputs(); }); }
  std::vector<Transferable*> outputs() { return visit([](auto& k) { return k.outputs(); }); }
  void generate_inputs(std::uint64_t seed) { visit([&](auto& k) { k.generate_inputs(seed); }); }
  // Where every class can generate on the device.
  template <class S = Space, std::enable_if_t<(generates_on_device<Kernels, S>::value && ...), int> = 0>
  void generate_inputs_on_device(const S& space, std::uint64_t seed) {
    visit([&](auto& k) { k.generate_inputs_on_device(space, seed); });
  }
  void compute(const Space& space) { visit([&](auto& k) { k.compute(space); }); }
  WorkEstimate work() const {
    return std::visit([](const auto& k) { return k.work(); }, chosen_);
  }
  Verification verify(std::optional<double> tolerance) const {
    return std::visit([&](const auto& k) { return k.verify(tolerance); }, chosen_);
  }

  // The class that runs the variant, for tests and benchmarks.
  template <class K>
  K& get() {
    return std::get<K>(chosen_);
  }
  // What every class shares, where they all derive from Base.
  template <class Base>
  Base& as() {
    return std::visit([](auto& k) -> Base& { return k; }, chosen_);
  }

 private:
  using Chosen = std::variant<Kernels...>;

  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), chosen_);
  }

  template <std::size_t I, class Params>
  static Chosen make(const Params& p, const std::string& variant, std::size_t size, const ranks::Slice& slice) {
    if constexpr (I == sizeof...(Kernels)) {
      throw std::invalid_argument("no kernel class runs variant '" + variant + "'");
    } else {
      using K = std::variant_alternative_t<I, Chosen>;
      if (!K::runs(variant)) return make<I + 1>(p, variant, size, slice);
      if constexpr (std::is_constructible_v<K, const Params&, const std::string&, std::size_t, const ranks::Slice&>)
        return Chosen(std::in_place_index<I>, p, variant, size, slice);
      if (slice.count > 1) throw std::invalid_argument("variant '" + variant + "' is not split across MPI ranks");
      return Chosen(std::in_place_index<I>, p, variant, size);
    }
  }

  Chosen chosen_;
};

}  // namespace miniapp
