#!/usr/bin/env bash
# Whether a CUDA build's object files share a __host__ __device__ lambda wrapper.
#
#   check-lambda-wrappers.sh BUILD_DIR
#
# nvcc's wrapper of a __host__ __device__ lambda keeps its copy/call/destroy pointers in per-unit
# statics, set by the wrapper's constructor; its member functions are shared between units. A
# wrapper (or anything instantiated on it) defined in two object files lets the linker pair one
# unit's constructor with another unit's copy, which calls a null pointer at run time: the first
# H100 run crashed so in the unit tests and the matrix benchmark. miniapp/core/kernel_unit.hpp
# makes every kernel template unit-local; this keeps it so. Host spaces count as much as the
# device: their kernels go through nvcc's front end in a CUDA build too, and a shared wrapper of
# a Serial kernel crashes on the host.
#
# Exit codes: 0 none shared (also where no object file holds a wrapper: a host-only build); 1 some
# are shared (the first ones printed, demangled), or there is no object file or no nm to read;
# 2 bad arguments.
set -uo pipefail
BUILD=${1:-}
if [ -z "$BUILD" ] || [ $# -ne 1 ]; then
  echo "usage: check-lambda-wrappers.sh BUILD_DIR" >&2
  exit 2
fi
[ -d "$BUILD" ] || { echo "check-lambda-wrappers: no directory $BUILD" >&2; exit 2; }
command -v nm >/dev/null || { echo "check-lambda-wrappers: nm (binutils) is missing" >&2; exit 1; }

objects=$(find "$BUILD" -name '*.o' | wc -l)
[ "$objects" -gt 0 ] || { echo "check-lambda-wrappers: no object files under $BUILD" >&2; exit 1; }
# Global (T, W, V, u) definitions only: a unit-local instantiation is a local symbol (t, w).
symbols=$(find "$BUILD" -name '*.o' -print0 | xargs -0 -r nm -A --defined-only 2>/dev/null \
  | awk '$3 ~ /__nv_hdl_wrapper_t/ && $2 ~ /^[TWVu]$/ {
           obj = $1; sub(/:[0-9a-f]*$/, "", obj); if (!((obj, $3) in seen)) { seen[obj, $3] = 1; n[$3]++; where[$3] = where[$3] " " obj } }
         END { for (s in n) if (n[s] > 1) print n[s] " objects:" where[s] "\n  " s }')
if [ -n "$symbols" ]; then
  echo "$symbols" | head -n 12 | c++filt | cut -c1-600
  echo "FAIL: $(echo "$symbols" | grep -c objects:) lambda wrappers are defined in more than one object file (first ones above): a kernel template that holds a KOKKOS_LAMBDA lacks MINIAPP_KERNEL_UNIT (miniapp/core/kernel_unit.hpp)"
  exit 1
fi
echo "ok: no __host__ __device__ lambda wrapper is shared between the $objects object files of $BUILD"
