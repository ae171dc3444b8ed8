#pragma once
// The counting half of every workload's verification: each value against its reference, the
// error relative to the scale the workload's bound is stated in, the largest errors (a NaN is
// the largest of all), how many values broke the bound, and the first of them at full precision.
// A workload's verify says what it compares against and why its bound is what it is; this
// counts.

#include "miniapp/core/measurement.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace miniapp {

// A value as it was computed: every digit a double holds.
inline std::string full_precision(double value) {
  std::ostringstream s;
  s.precision(17);
  s << value;
  return s.str();
}

class ErrorTally {
 public:
  explicit ErrorTally(double tolerance) : tolerance_(tolerance) {}

  // `got` against `reference`, the error relative to `scale`, within the tally's tolerance or
  // the one given. `name` (a callable returning e.g. "z(1,7)") is called for the first failure
  // only. Returns whether the value passed.
  template <class Name>
  bool compare(double got, double reference, double scale, Name&& name) {
    return compare(got, reference, scale, tolerance_, std::forward<Name>(name));
  }
  template <class Name>
  bool compare(double got, double reference, double scale, double tolerance, Name&& name) {
    const double abs_error = std::abs(got - reference);
    return record(abs_error, scale > 0 ? abs_error / scale : abs_error, tolerance, [&] {
      return std::string(name()) + " = " + full_precision(got) + ", reference " + full_precision(reference);
    });
  }

  // An error the workload measured itself (e.g. a scaled residual), with the whole message of
  // its failure.
  template <class Describe>
  bool record(double abs_error, double rel_error, double tolerance, Describe&& describe) {
    ++compared_;
    max_abs_error_ = std::max(max_abs_error_, std::isnan(abs_error) ? kInfinity : abs_error);
    max_rel_error_ = std::max(max_rel_error_, std::isnan(rel_error) ? kInfinity : rel_error);
    if (rel_error <= tolerance) return true;  // false for NaN
    fail(std::forward<Describe>(describe));
    return false;
  }

  // A failure that is not a difference from a reference value ("nearest index(4) = 4 is not
  // another point"); `describe` is called for the first failure only.
  template <class Describe>
  void fail(Describe&& describe) {
    if (failures_++ == 0) first_failure_ = describe();
  }

  double tolerance() const { return tolerance_; }
  std::size_t compared() const { return compared_; }
  std::size_t failures() const { return failures_; }
  bool passed() const { return failures_ == 0; }
  double max_abs_error() const { return max_abs_error_; }
  double max_rel_error() const { return max_rel_error_; }
  const std::string& first_failure() const { return first_failure_; }

  // "; 3 wrong, first z(1,7) = ..., reference ...", or nothing when every value passed.
  std::string failure_summary(const std::string& what = "wrong") const {
    if (failures_ == 0) return "";
    return "; " + std::to_string(failures_) + " " + what + ", first " + first_failure_;
  }

  // The verification these counts make: `checked` says what was compared (the failure summary
  // follows it in the detail).
  Verification result(std::string reference, const std::string& checked) const {
    Verification v;
    v.checked = true;
    v.passed = passed();
    v.max_abs_error = max_abs_error_;
    v.max_rel_error = max_rel_error_;
    v.tolerance = tolerance_;
    v.reference = std::move(reference);
    v.detail = checked + failure_summary();
    return v;
  }

 private:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  double tolerance_;
  std::size_t compared_ = 0;
  std::size_t failures_ = 0;
  double max_abs_error_ = 0;
  double max_rel_error_ = 0;
  std::string first_failure_;
};

}  // namespace miniapp
