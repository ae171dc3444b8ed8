#pragma once
// The elementwise form of seed 000: z = x ** y (or x * y) over arrays of shape (rows, size).
// The smallest problem of the mini-app, and the one to copy (docs/adding-a-workload.md).

#include "miniapp/core/field.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/workloads/matrix/kernels.hpp"
#include "miniapp/workloads/matrix/params.hpp"
#include "miniapp/workloads/matrix/reference.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace miniapp::matrix {

template <class Scalar, class Space>
class Elementwise {
 public:
  using Matrix = Field<Scalar**, Space>;

  static bool runs(const std::string& variant) { return Description::variant(variant) == Variant::Elementwise; }

  Elementwise(const Params& p, const std::string&, std::size_t size)
      : op_(p.op), x_("x", p.rows, size), y_("y", p.rows, size), z_("z", p.rows, size) {}

  std::vector<Transferable*> inputs() { return {&x_, &y_}; }
  std::vector<Transferable*> outputs() { return {&z_}; }

  void generate_inputs(std::uint64_t seed) {
    fill_host<false>(x_.host, seed, 0);
    fill_host<false>(y_.host, seed, x_.host.span());
  }
  void generate_inputs_on_device(const Space& space, std::uint64_t seed) {
    fill_device<false>(space, x_.device, seed, 0);
    fill_device<false>(space, y_.device, seed, x_.device.span());
  }

  void compute(const Space& space) { elementwise(space, op_, x_.device, y_.device, z_.device); }

  // One operation per element, pow counted as one like a multiply.
  WorkEstimate work() const {
    const double n = static_cast<double>(z_.device.span()), s = sizeof(Scalar);
    return {n, 2 * n * s, n * s};
  }

  Verification verify(std::optional<double> tolerance) const {
    return verify_elementwise<Scalar>(op_, x_.host, y_.host, z_.host, tolerance);
  }

  // Direct access for tests and benchmarks.
  Matrix& x() { return x_; }
  Matrix& y() { return y_; }
  Matrix& z() { return z_; }

 private:
  Operation op_;
  Matrix x_, y_, z_;
};

}  // namespace miniapp::matrix
