#include "miniapp/workloads/distance/distance.hpp"
#include "miniapp/core/workload_instance.hpp"


MINIAPP_REGISTER_WORKLOAD(miniapp::distance::DistanceWorkload);
