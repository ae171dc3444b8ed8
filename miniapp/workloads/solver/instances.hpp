// The solver's problem classes on one compiled space, both precisions: included only by the unit
// CMake generates for that space (cmake/workload_instance.cpp.in), after it names the space
// miniapp::instance::Space. Everything else includes problem.hpp and links to these.

#include "miniapp/workloads/solver/problem_timpl.hpp"

template class miniapp::solver::Systems<float, miniapp::instance::Space>;
template class miniapp::solver::Systems<double, miniapp::instance::Space>;
template class miniapp::solver::Batched<float, miniapp::instance::Space>;
template class miniapp::solver::Batched<double, miniapp::instance::Space>;
template class miniapp::solver::DenseBlocked<float, miniapp::instance::Space>;
template class miniapp::solver::DenseBlocked<double, miniapp::instance::Space>;
template class miniapp::solver::DenseVendor<float, miniapp::instance::Space>;
template class miniapp::solver::DenseVendor<double, miniapp::instance::Space>;
