#pragma once
// Which of TeamGradient's forms (team_gradient.hpp) take rows of a given length on a device
// space, in the order fused_sums prefers them, and what each needs: its partials and whether its
// scratch fits a team.

#include "miniapp/core/kokkos_compat.hpp"
#include "miniapp/workloads/regression/team_gradient.hpp"

#include <cstddef>
#include <type_traits>

namespace miniapp::regression {

// The values TeamGradient's partials take for `rows` rows of `cols` columns on Space (initialized).
template <class Scalar, class Space, int Lanes = kTeamGradientLanes<Scalar>>
std::size_t team_gradient_partials_size(std::size_t rows, std::size_t cols, const Space& space = Space()) {
  return static_cast<std::size_t>(TeamGradient<Scalar, Space, Lanes>::teams(rows, space)) * (cols + 1);
}

// Whether TeamGradient's scratch fits a team of Space for `cols` columns (after initialize).
template <class Scalar, class Space, int Lanes = kTeamGradientLanes<Scalar>>
bool team_gradient_fits(std::size_t cols) {
  const auto limit = compat::team_scratch_size_max<Space>(0);
  return limit && TeamGradient<Scalar, Space, Lanes>::scratch_bytes(cols) <= *limit;
}

// f(lanes, register_columns), both std::integral_constant, for each of TeamGradient's forms that
// take rows of `cols` columns on a device space, in the order fused_sums prefers them: the
// register form on kTeamGradientRegisterLanes, the narrow form (the register form on one lane),
// the scratch form on kTeamGradientLanes (register_columns 0). Whether a form's scratch fits is
// the caller's to ask (team_gradient_fits).
template <class Scalar, class Space, class F>
void for_each_team_form(const std::size_t cols, F&& f) {
  using Registers = std::integral_constant<int, kTeamGradientRegisterColumns>;
  using Narrow = std::integral_constant<int, kTeamGradientNarrowColumns>;
  if (team_gradient_register_form_takes(cols)) f(std::integral_constant<int, kTeamGradientRegisterLanes>{}, Registers{});
  if (team_gradient_narrow_form_takes(cols)) f(std::integral_constant<int, 1>{}, Narrow{});
  if (cols >= static_cast<std::size_t>(TeamGradient<Scalar, Space>::kLanes))
    f(std::integral_constant<int, kTeamGradientLanes<Scalar>>{}, std::integral_constant<int, 0>{});
}

// f(lanes, register_columns) for the first form of for_each_team_form whose scratch fits a team
// of Space; whether there was one.
template <class Scalar, class Space, class F>
bool with_team_form(const std::size_t cols, F&& f) {
  bool taken = false;
  for_each_team_form<Scalar, Space>(cols, [&](auto lanes, auto columns) {
    if (taken || !team_gradient_fits<Scalar, Space, decltype(lanes)::value>(cols)) return;
    f(lanes, columns);
    taken = true;
  });
  return taken;
}

}  // namespace miniapp::regression
