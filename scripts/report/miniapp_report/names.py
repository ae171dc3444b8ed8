"""The names results.json gives mirror policies and execution spaces, declared once for the Python
side: the advisor, the report, scripts/gpu_summary.py and the tests read them from here. They are
the C++ names (MirrorPolicy's to_string in miniapp/core/mirror_policy.hpp; Kokkos' space names in
lower case, the table in cmake/MiniappSpaces.cmake); tests/record/test_results_schema.py checks
that they agree. Standard library only."""


class Policy:
    """The mirror policies (seed 000's copy experiment)."""
    HOST = "host"
    COPY_EVERY_ITERATION = "copy-every-iteration"
    INPUTS_RESIDENT = "inputs-resident"
    ALL_RESIDENT = "all-resident"
    COPY_EVERY_ITERATION_PINNED = "copy-every-iteration-pinned"


MIRROR_POLICIES = (Policy.HOST, Policy.COPY_EVERY_ITERATION, Policy.INPUTS_RESIDENT, Policy.ALL_RESIDENT,
                   Policy.COPY_EVERY_ITERATION_PINNED)
# Host policies alias one another on a host space; the first present stands for the space.
HOST_POLICY_ORDER = (Policy.HOST, Policy.ALL_RESIDENT, Policy.INPUTS_RESIDENT, Policy.COPY_EVERY_ITERATION)
# The policies of a device space; copy-every-iteration-pinned runs on device spaces only (its host
# mirrors are page-locked).
DEVICE_POLICIES = (Policy.ALL_RESIDENT, Policy.INPUTS_RESIDENT, Policy.COPY_EVERY_ITERATION,
                   Policy.COPY_EVERY_ITERATION_PINNED)


class Space:
    """The execution spaces the mini-app compiles for."""
    SERIAL = "serial"
    OPENMP = "openmp"
    THREADS = "threads"
    CUDA = "cuda"
    HIP = "hip"


# Spaces whose mirrors alias (host memory). The results say so per measurement
# (transfers.mirrors_alias); this list is the fallback for files that predate that field.
HOST_SPACES = (Space.SERIAL, Space.OPENMP, Space.THREADS)
DEVICE_SPACES = (Space.CUDA, Space.HIP)
