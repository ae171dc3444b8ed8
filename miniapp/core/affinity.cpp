#include "miniapp/core/affinity.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <vector>

namespace miniapp {

cpu_set_t process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
#if defined(_OPENMP) && _OPENMP >= 201511
  const int places = omp_get_num_places();
  for (int p = 0; p < places; ++p) {
    std::vector<int> ids(static_cast<std::size_t>(omp_get_place_num_procs(p)));
    omp_get_place_proc_ids(p, ids.data());
    for (int id : ids)
      if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &set);
  }
  if (CPU_COUNT(&set) > 0) return set;
#endif
  if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
  return set;
}

}  // namespace miniapp
