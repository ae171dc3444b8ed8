#include "miniapp/workloads/matrix/matrix.hpp"
#include "miniapp/core/workload_instance.hpp"


MINIAPP_REGISTER_WORKLOAD(miniapp::matrix::MatrixWorkload);
