#include "miniapp/workloads/regression/regression.hpp"

MINIAPP_REGISTER_WORKLOAD(miniapp::regression::RegressionWorkload);
