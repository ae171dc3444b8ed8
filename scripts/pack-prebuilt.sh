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
# 19 MB for the CUDA build of every target (Kokkos 4.6.01), whose build directory holds 348 MB.
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
  put "$exe"
  strip "$stage$exe"
done
for lib in "$PROJECT"/tests/*.so; do [ -f "$lib" ] && put "$lib"; done
# The bundle's shared libraries (not its headers, sources or static libraries).
while IFS= read -r f; do put "$f"; done < <(find "$BUNDLE/prefix" \( -type f -o -type l \) -name '*.so*')
tar -C "$stage" -cJf "$OUT" .
echo "pack-prebuilt: $OUT ($(du -h "$OUT" | cut -f1)): unpack on the node with tar -xJf $(basename "$OUT") -C /"
