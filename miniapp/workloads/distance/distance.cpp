#include "miniapp/workloads/distance/distance.hpp"

MINIAPP_REGISTER_WORKLOAD(miniapp::distance::DistanceWorkload);
