// The distance workload's problem classes on one compiled space, both precisions: included only by
// the unit CMake generates for that space (cmake/workload_instance.cpp.in), after it names the
// space miniapp::instance::Space. Everything else includes the class headers and links to these.

#include "miniapp/workloads/distance/problem_timpl.hpp"

template class miniapp::distance::Kernel<float, miniapp::instance::Space>;
template class miniapp::distance::Kernel<double, miniapp::instance::Space>;
