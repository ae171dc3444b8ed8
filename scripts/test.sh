#!/usr/bin/env bash
# Command 2 of the README (and what .ci/run calls): installs and builds what is missing, then
# runs the whole test suite with ctest. Extra arguments go to ctest (e.g. -L unit, -R deck).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${MINIAPP_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/build.sh"

export OMP_PROC_BIND=${OMP_PROC_BIND:-false} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
cd "$BUILD_DIR"
exec ctest --output-on-failure --timeout 1500 "$@"
