#include "miniapp/workloads/solver/solver.hpp"
#include "miniapp/core/workload_instance.hpp"


MINIAPP_REGISTER_WORKLOAD(miniapp::solver::SolverWorkload);
