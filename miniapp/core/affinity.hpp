#pragma once
// The CPUs this process may use. With OMP_PROC_BIND set, the OpenMP runtime pins the initial
// thread to its first place as soon as it loads (before main), so the thread's own affinity mask
// then names one CPU. The places it computed from the original mask still name them all.

#include <sched.h>

namespace miniapp {

// The union of the OpenMP places where there are any, else this thread's affinity mask.
cpu_set_t process_cpus();

}  // namespace miniapp
