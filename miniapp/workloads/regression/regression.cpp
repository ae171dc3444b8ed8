#include "miniapp/workloads/regression/regression.hpp"
#include "miniapp/core/workload_instance.hpp"


MINIAPP_REGISTER_WORKLOAD(miniapp::regression::RegressionWorkload);
