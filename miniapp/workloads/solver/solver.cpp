#include "miniapp/workloads/solver/solver.hpp"

MINIAPP_REGISTER_WORKLOAD(miniapp::solver::SolverWorkload);
