#!/usr/bin/env bash
# Command 1 of the README: installs and builds what is missing, then runs a deck.
#
#   scripts/run.sh [DECK.yaml] [miniapp options]     (default deck: input/quickstart.yaml)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${MINIAPP_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/build.sh"

deck="$ROOT/input/quickstart.yaml"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then deck=$1; shift; fi

# Pinned OpenMP threads unless the user chose otherwise.
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
exec "$BUILD_DIR/bin/miniapp" "$deck" "$@"
