#!/usr/bin/env bash
# Registers, stack and spills of every CUDA kernel of one compile unit, without a GPU: compiles
# SOURCE as BUILD_DIR's ninja would (its own command line, nvcc_wrapper and flags), with
# -Xptxas -v and into a scratch object, then prints scripts/ptxas_audit.py's table.
#
#   scripts/ptxas-audit.sh BUILD_DIR SOURCE [REGEX]
#
# BUILD_DIR: a CUDA build of the project configured with Ninja (scripts/build-offline.sh's
# project directory, or the device check's build); SOURCE: a source file of the project
# (benchmarks/bench_solver.cpp); REGEX: keep the kernels whose demangled name matches. The build
# directory is not changed. Exit codes: 0 printed; 1 the compile failed (its output is printed) or
# no kernel matched; 2 bad arguments or no compile command for SOURCE in BUILD_DIR.
set -euo pipefail
usage() { echo "usage: ptxas-audit.sh BUILD_DIR SOURCE [REGEX]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "ptxas-audit: no build directory $1" >&2; exit 2; }
[ -f "$BUILD/build.ninja" ] || { echo "ptxas-audit: $BUILD is not a Ninja build" >&2; exit 2; }
[ -f "$2" ] || { echo "ptxas-audit: no source file $2" >&2; exit 2; }
SOURCE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
command -v ninja >/dev/null || { echo "ptxas-audit: ninja is not installed" >&2; exit 2; }
cmd=$(ninja -C "$BUILD" -t commands | grep -F -- " -c $SOURCE" | tail -n 1 || true)
[ -n "$cmd" ] || { echo "ptxas-audit: $BUILD compiles no $SOURCE" >&2; exit 2; }
case "$cmd" in *nvcc*) ;; *) echo "ptxas-audit: $BUILD compiles $SOURCE without nvcc (not a CUDA build)" >&2; exit 2 ;; esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# the same command with its object (and dependency file) in the scratch directory
cmd=$(printf '%s' "$cmd" | sed -E "s# -o [^ ]+# -o $scratch/unit.o#; s# -MF [^ ]+# -MF $scratch/unit.d#")
if ! (cd "$BUILD" && eval "$cmd -Xptxas -v") >"$scratch/ptxas.log" 2>&1; then
  cat "$scratch/ptxas.log" >&2
  echo "ptxas-audit: compiling $SOURCE failed (above)" >&2
  exit 1
fi
rc=0
python3 "$(dirname "${BASH_SOURCE[0]}")/ptxas_audit.py" "$scratch/ptxas.log" ${3:+"$3"} || rc=$?
exit "$rc"
