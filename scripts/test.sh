#!/usr/bin/env bash
# Command 2 of the README: installs and builds what is missing, then runs the tests with ctest.
#
#   scripts/test.sh [--all] [ctest arguments...]
#
# Without --all: the tests a user needs to trust their build (unit tests on every compiled space,
# e2e, report and advise, the job subcommands, the real Slurm cluster where it can start, the
# benchmark smoke runs): every ctest except those labelled `full`.
# --all: every ctest, adding the CUDA/HIP compile checks, the sanitizers and the fuzzer, the
# offline rehearsals and the Kokkos 4.5.1/5.2.2 builds. This is what .ci/run calls.
# Other arguments go to ctest (e.g. -L unit, -R deck); they narrow the chosen tier.
set -euo pipefail

usage() { sed -n '2,11s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

tier=(-LE full)
args=()
for arg in "$@"; do
  case $arg in
    --all) tier=() ;;
    -h|--help) usage; exit 0 ;;
    *) args+=("$arg") ;;
  esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${MINIAPP_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/build.sh"

export OMP_PROC_BIND=${OMP_PROC_BIND:-false} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
cd "$BUILD_DIR"
exec ctest --output-on-failure --timeout 1500 "${tier[@]}" "${args[@]}"
