#!/usr/bin/env bash
# Whether a build's object files hold an aligned vector move (movaps/movapd/movdqa and their
# VEX/EVEX forms), which faults on an address off its vector's alignment.
#
#   check-vector-moves.sh DIR...
#
# GCC 12 at AVX-512 emits 32-byte aligned moves on a local array it has put 16 bytes off that
# alignment (the register form of batched-thread crashed so in every CUDA build at x86-64-v4:
# CMakeLists.txt). Where the build targets a CPU (MINIAPP_NATIVE_ARCH, MINIAPP_HOST_MARCH) with
# GCC, the assembler writes every such move as its unaligned form (-muse-unaligned-vector-move):
# none may be left. Non-temporal stores (movnt*) need their alignment and are written on purpose
# (core/host_simd.hpp aligns their destination first): not counted.
#
# Exit codes: 0 none in the object files under DIR...; 1 some (the objects and a count each, the
# first instructions printed), or there is no object file or no objdump to read; 2 bad arguments.
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: check-vector-moves.sh DIR..." >&2
  exit 2
fi
for dir in "$@"; do
  [ -d "$dir" ] || { echo "check-vector-moves: no directory $dir" >&2; exit 2; }
done
command -v objdump >/dev/null || { echo "check-vector-moves: objdump (binutils) is missing" >&2; exit 1; }

mapfile -d '' objects < <(find "$@" -name '*.o' -print0)
[ "${#objects[@]}" -gt 0 ] || { echo "check-vector-moves: no object files under $*" >&2; exit 1; }
aligned='[[:space:]](v?movap[sd]|v?movdqa(32|64)?)[[:space:]]'
found=0
for object in "${objects[@]}"; do
  moves=$(objdump -d --no-show-raw-insn "$object" 2>/dev/null | grep -E "$aligned")
  [ -n "$moves" ] || continue
  found=$((found + 1))
  if [ "$found" -le 8 ]; then
    echo "$object: $(printf '%s\n' "$moves" | wc -l) aligned vector moves, e.g."
    printf '%s\n' "$moves" | head -n 2 | sed 's/^/  /'
  fi
done
if [ "$found" -gt 0 ]; then
  echo "FAIL: $found of the ${#objects[@]} object files hold aligned vector moves (first ones above): built without -Xassembler -muse-unaligned-vector-move (CMakeLists.txt)"
  exit 1
fi
echo "ok: no aligned vector move in the ${#objects[@]} object files under $*"
