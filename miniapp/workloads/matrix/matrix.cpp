#include "miniapp/workloads/matrix/matrix.hpp"

MINIAPP_REGISTER_WORKLOAD(miniapp::matrix::MatrixWorkload);
