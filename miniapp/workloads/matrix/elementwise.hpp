#pragma once
// The elementwise form of seed 000: z = x ** y (or x * y) over arrays of shape (rows, size).
// The smallest problem of the mini-app, and the one to copy (docs/adding-a-workload.md). The
// members that launch kernels or compute the reference are defined in problem_timpl.hpp.

#include "miniapp/core/field.hpp"
#include "miniapp/core/measurement.hpp"
#include "miniapp/core/ranks.hpp"
#include "miniapp/workloads/matrix/kernels.hpp"
#include "miniapp/workloads/matrix/params.hpp"
#include "miniapp/workloads/matrix/reference.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace miniapp::matrix {

template <class Scalar, class Space>
class Elementwise {
 public:
  using Matrix = Field<Scalar**, Space>;

  static bool runs(const std::string& variant) { return Description::variant(variant) == Variant::Elementwise; }

  // The arrays of shape (rows, size), or with a slice one MPI rank's contiguous part of their
  // rows x size elements, held as one row (the parts are even whatever the row count).
  Elementwise(const Params& p, const std::string&, std::size_t size, const ranks::Slice& slice = {})
      : op_(p.op),
        total_(static_cast<std::size_t>(p.rows) * size),
        first_(slice.range(total_).first),
        x_("x", shape(p, size, slice).first, shape(p, size, slice).second),
        y_("y", shape(p, size, slice).first, shape(p, size, slice).second),
        z_("z", shape(p, size, slice).first, shape(p, size, slice).second) {}

  // The elements [first, second) of the whole arrays held here.
  std::pair<std::size_t, std::size_t> own_elements() const { return {first_, first_ + z_.device.span()}; }

  std::vector<Transferable*> inputs() { return {&x_, &y_}; }
  std::vector<Transferable*> outputs() { return {&z_}; }

  // Element e of the whole x is value e of the stream, of y value rows x size + e.
  void generate_inputs(std::uint64_t seed);
  void generate_inputs_on_device(const Space& space, std::uint64_t seed);

  void compute(const Space& space);

  // One operation per element, pow counted as one like a multiply.
  WorkEstimate work() const {
    const double n = static_cast<double>(z_.device.span()), s = sizeof(Scalar);
    return {n, 2 * n * s, n * s};
  }

  Verification verify(std::optional<double> tolerance) const;

  // Direct access for tests and benchmarks.
  Matrix& x() { return x_; }
  Matrix& y() { return y_; }
  Matrix& z() { return z_; }

 private:
  static std::pair<std::size_t, std::size_t> shape(const Params& p, std::size_t size, const ranks::Slice& slice) {
    if (slice.count == 1) return {static_cast<std::size_t>(p.rows), size};
    return {1, slice.part(static_cast<std::size_t>(p.rows) * size)};
  }

  Operation op_;
  std::size_t total_;  // elements of each whole array
  std::size_t first_;  // the first element held
  Matrix x_, y_, z_;
};

}  // namespace miniapp::matrix
