#!/usr/bin/env bash
# Packs a build of scripts/build-offline.sh for a GPU node that does not share this machine's file
# system (scripts/gpu-run.sh --prebuilt runs it there): the programs, stripped; the test libraries
# and ctest files the unit-test step needs; offline-build.env; and the bundle's shared libraries,
# which the programs find by their run path. Everything keeps its absolute path, so the build must
# be unpacked where it was made:
#
#   scripts/pack-prebuilt.sh BUILD_DIR OUT.tar.xz      (here)
#   tar -xJf OUT.tar.xz -C /                           (on the node, then gpu-run.sh --prebuilt)
#
# Left out: miniapp_jobs_tests, the tests of the job subcommands (submit, merge, queue-wait). They
# test host-only code that every CI run covers, yet the program links every device kernel; with it
# the pack no longer fitted a 64 MiB carry beside the project. gpu-run.sh leaves unit.jobs out
# where the program is absent and says so in steps.tsv. Compressed with xz -9e (XZ_OPT overrides
# it): 13 MB in 2 minutes on 2 cores for the CUDA build of every target (Kokkos 4.6.01), whose build
# directory holds 348 MB; 21 MB with miniapp_jobs_tests at xz's default level.
# Exit codes: 0 packed; 1 a step failed; 2 bad arguments.
set -euo pipefail
usage_error() { echo "pack-prebuilt: $*" >&2; exit 2; }
[ $# -eq 2 ] || usage_error "usage: pack-prebuilt.sh BUILD_DIR OUT.tar.xz"
[ -f "$1/offline-build.env" ] || usage_error "$1 is not a build of scripts/build-offline.sh (no offline-build.env)"
BUILD=$(cd "$1" && pwd)
OUT=$2
built() { sed -n "s/^$1=//p" "$BUILD/offline-build.env" | tr -d '"' | head -n 1; }
PROJECT=$(built PROJECT_BUILD)
BUNDLE=$(built BUNDLE)
[ -x "$PROJECT/bin/miniapp" ] || usage_error "no $PROJECT/bin/miniapp: build the project first"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
put() { mkdir -p "$stage$(dirname "$1")" && cp -a "$1" "$stage$1"; }
put "$BUILD/offline-build.env"
while IFS= read -r f; do put "$f"; done < <(find "$PROJECT" -name CTestTestfile.cmake)
for exe in "$PROJECT"/bin/* "$PROJECT"/tests/miniapp_*_tests; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  [ "$(basename "$exe")" = miniapp_jobs_tests ] && continue
  put "$exe"
  strip "$stage$exe"
done
for lib in "$PROJECT"/tests/*.so; do [ -f "$lib" ] && put "$lib"; done
# The bundle's shared libraries (not its headers, sources or static libraries).
while IFS= read -r f; do put "$f"; done < <(find "$BUNDLE/prefix" \( -type f -o -type l \) -name '*.so*')
XZ_OPT=${XZ_OPT:--9e} tar -C "$stage" -cJf "$OUT" .
echo "pack-prebuilt: $OUT ($(du -h "$OUT" | cut -f1)): unpack on the node with tar -xJf $(basename "$OUT") -C /"
