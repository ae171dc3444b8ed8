// The matrix workload's problem classes on one compiled space, both precisions: included only by
// the unit CMake generates for that space (cmake/workload_instance.cpp.in), after it names the
// space miniapp::instance::Space. Everything else includes the class headers and links to these.

#include "miniapp/workloads/matrix/problem_timpl.hpp"

template class miniapp::matrix::Elementwise<float, miniapp::instance::Space>;
template class miniapp::matrix::Elementwise<double, miniapp::instance::Space>;
template class miniapp::matrix::Gemm<float, miniapp::instance::Space>;
template class miniapp::matrix::Gemm<double, miniapp::instance::Space>;
