#!/usr/bin/env bash
# Compiles the whole project (mini-app, tests, benchmarks) for a GPU backend, so that CI fails on
# any device-compile error even on a machine without a GPU. Nothing is run. Spaces: Serial and
# the device (the tests and benchmarks: the device only).
#
#   check_device_build.sh cuda|hip SOURCE_DIR
#
#   cuda: Kokkos 3.4.01 + CUDA (sm_80), compiled with the nvcc_wrapper installed in the prefix of
#         scripts/bootstrap-debian.sh --backend cuda; needs nvcc (PATH or /usr/local/cuda/bin).
#   hip:  Kokkos 3.4.01 + HIP (gfx908), compiled with Debian's hipcc, which the bootstrap installs.
#
# The build directory is outside the source tree and kept between runs, so a second run only
# recompiles what changed: $MINIAPP_CACHE/device-builds/<backend>-<hash of SOURCE_DIR>.
# Prints "skipped: <why>" and exits 0 (ctest: skipped) only when nvcc is absent or the package
# archive has no hipcc; every other failure (an install or bootstrap that fails, a compile error)
# exits 1 with the tool's output.
#
# Environment: MINIAPP_CACHE (cache root), MINIAPP_JOBS (parallel jobs, default: nproc).
set -uo pipefail

BACKEND=${1:?usage: check_device_build.sh cuda|hip SOURCE_DIR}
SRC=$(cd "${2:?usage: check_device_build.sh cuda|hip SOURCE_DIR}" && pwd) || { echo "FAIL: no source directory '$2'"; exit 1; }
BOOTSTRAP="$SRC/scripts/bootstrap-debian.sh"
CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
JOBS=${MINIAPP_JOBS:-$(nproc)}
START=$SECONDS

# ctest reports a test whose output matches "skipped:" as skipped: keep that text out of whatever
# tool output is passed through, so a failure can never be mistaken for a skip.
relay() { sed 's/skipped:/skipped -/g'; }
fail() { echo "FAIL: $*"; exit 1; }

# hipcc (clang's offload driver) leaves an empty directory in $TMPDIR for every unit it compiles
# (`solver_hip-1a2b3c`, `unity_0_cxx-...`: about 40 a run); nvcc's temporaries go there too. Both
# get a directory of this run's own, removed however the run ends.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/miniapp-device-check.XXXXXX") || fail "no temporary directory"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch

case "$BACKEND" in
  cuda)
    nvcc=$(command -v nvcc 2>/dev/null || true)
    [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
    if [ -z "$nvcc" ]; then
      echo "skipped: nvcc not found (neither on PATH nor in /usr/local/cuda/bin)"
      exit 0
    fi
    PATH="$(dirname "$nvcc"):$PATH"  # nvcc_wrapper runs plain `nvcc`
    export PATH
    echo "nvcc: $nvcc ($("$nvcc" --version | sed -n 's/.*\(release [0-9.]*\).*/\1/p'))"
    ;;
  hip)
    # Without a target hipcc asks rocm_agent_enumerator, which fails (traceback) on GPU-less hosts.
    export HCC_AMDGPU_TARGET=${HCC_AMDGPU_TARGET:-gfx908}
    # Always asked for (quick when present): the fuzz check's clang may have replaced the OpenMP
    # headers of hipcc's clang since the last run.
    log=$(mktemp)
    if ! "$BOOTSTRAP" --backend hip --packages-only >"$log" 2>&1 || ! command -v hipcc >/dev/null 2>&1; then
      if ! command -v hipcc >/dev/null 2>&1; then
        # Skipped only where the archive has no hipcc; a failed install of a package it has fails.
        if apt-cache policy hipcc 2>/dev/null | grep -qE 'Candidate: [0-9]'; then
          relay <"$log" | tail -n 20
          rm -f "$log"
          fail "Debian's archive has hipcc but installing it failed (output above)"
        fi
        echo "skipped: hipcc cannot be installed: this system's package archive has no hipcc package"
        relay <"$log" | tail -n 20
        rm -f "$log"
        exit 0
      fi
      relay <"$log" | tail -n 20
      rm -f "$log"
      fail "installing the HIP packages (hipcc's OpenMP headers) failed (output above)"
    fi
    rm -f "$log"
    echo "hipcc: $(command -v hipcc) (Debian package $(dpkg-query -W -f='${Version}' hipcc 2>/dev/null))"
    ;;
  *) fail "unknown backend '$BACKEND' (cuda or hip)" ;;
esac

# 1. Kokkos + Kokkos Kernels for the backend (cached; built only the first time).
prefix=$("$BOOTSTRAP" --backend "$BACKEND" --print-prefix 2> >(relay >&2)) \
  || fail "scripts/bootstrap-debian.sh --backend $BACKEND failed (its output is above)"
flags=""
case "$BACKEND" in
  cuda)
    cxx="$prefix/bin/nvcc_wrapper"
    # nvcc only warns when a KOKKOS_LAMBDA / KOKKOS_FUNCTION calls a host-only function (20011,
    # 20014) or a constexpr host function (20013, 20015); the device code is then broken, and
    # hipcc rejects the same source. Make these errors.
    for diag in 20011 20013 20014 20015; do flags+="${flags:+ }-Xcudafe --diag_error=$diag"; done
    # nvcc's device phases unoptimised too (cicc and ptxas; -O0 reaches only the host compiler):
    # they still generate and assemble every kernel, so code generation errors still fail, and
    # the device-heavy units compile faster (measured in docs/testing.md). nvcc_wrapper forwards
    # no -Xcicc, so through the variable nvcc reads itself.
    export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:+$NVCC_APPEND_FLAGS }-Xcicc -O0 -Xptxas -O0"
    ;;
  hip) cxx=$(command -v hipcc) ;;
esac
# Tests and benchmarks for the device space only: the host build compiles their host spaces
# (see TestedSpaces in miniapp/core/spaces.hpp). The mini-app keeps Serial beside the device
# (MINIAPP_ONLY_SPACES), so the host branches of every kernel still pass through nvcc's and
# hipcc's front ends, as in a Spack build (Serial + the device is Spack's default); OpenMP's
# instances of the same templates would add a third of the workloads' compile time again.
flags+="${flags:+ }-DMINIAPP_CHECK_DEVICE_SPACES_ONLY"
spaces="serial;$BACKEND"
[ -x "$cxx" ] || fail "no compiler $cxx"
echo "Kokkos prefix: $prefix ($((SECONDS - START)) s)"

# 2. The project, configured once per source tree and backend, then built incrementally.
# Unoptimised (build type DeviceCheck: -O0, asserts on): nothing built here runs, and the errors
# this check exists for come from the compilers' front ends at any optimisation level. -O3 took
# 1.6x (nvcc) and 2.6x (hipcc) as long for the same source. Without MPI: core/ranks.cpp is host
# code calling MPI's C interface, and the MPI tests compile the same kernels the unit tests do.
# A unity build (CMake merges up to 8 sources of a target into one unit): nvcc and hipcc parse
# Kokkos' headers once per unit, which costs most of the time of the units that launch no kernel.
# The workloads' generated units stay apart (each names its space); the main build, unmerged,
# is the one that catches a source missing an include it needs.
build="$CACHE_ROOT/device-builds/$BACKEND-$(printf '%s' "$SRC" | sha256sum | cut -c1-12)"
cache="$build/CMakeCache.txt"
if [ ! -f "$cache" ] || ! grep -qx "Kokkos_ROOT:[A-Z]*=$prefix" "$cache" \
   || ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$cxx" "$cache" \
   || ! grep -qx "CMAKE_BUILD_TYPE:[A-Z]*=DeviceCheck" "$cache" \
   || ! grep -qxF "CMAKE_CXX_FLAGS:STRING=$flags" "$cache" \
   || ! grep -qx "MINIAPP_WITH_MPI:STRING=OFF" "$cache" \
   || ! grep -qx "CMAKE_UNITY_BUILD:[A-Z]*=ON" "$cache" \
   || ! grep -qxF "MINIAPP_ONLY_SPACES:STRING=$spaces" "$cache" \
   || [ "$(cat "$build/nvcc-append-flags" 2>/dev/null)" != "${NVCC_APPEND_FLAGS:-}" ]; then
  echo "configuring $build"
  rm -rf "$build"
  mkdir -p "$build"
  if ! cmake -S "$SRC" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=DeviceCheck -DCMAKE_CXX_FLAGS_DEVICECHECK=-O0 \
         -DCMAKE_CXX_COMPILER="$cxx" \
         -DCMAKE_CXX_FLAGS="$flags" -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix" \
         -DMINIAPP_WITH_MPI=OFF -DMINIAPP_ONLY_SPACES="$spaces" -DCMAKE_UNITY_BUILD:BOOL=ON >"$build/configure.log" 2>&1; then
    relay <"$build/configure.log"
    rm -rf "$build"  # a half-configured tree is never reused
    fail "configuring the project for $BACKEND failed"
  fi
  # ninja does not see nvcc's variable: a tree built with other device flags is rebuilt whole.
  printf '%s' "${NVCC_APPEND_FLAGS:-}" >"$build/nvcc-append-flags"
fi
echo "building $build with $cxx (-j $JOBS)"
# -k 0: report every source that fails to compile for the device, not only the first.
cmake --build "$build" --parallel "$JOBS" -- -k 0 2>&1 | relay
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "the project does not compile for $BACKEND (errors above)"

# No __host__ __device__ lambda wrapper defined in two object files (why: the script's header).
if [ "$BACKEND" = cuda ]; then
  "$SRC/scripts/lib/check-lambda-wrappers.sh" "$build" 2>&1 | relay
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "a lambda wrapper is shared between object files (above)"
fi
echo "ok: the whole project compiles for $BACKEND ($((SECONDS - START)) s)"
