#!/usr/bin/env bash
# scripts/lib/check-vector-moves.sh on fixture objects the C compiler assembles here (an aligned
# move written as such, or through -Xassembler -muse-unaligned-vector-move as this build's units are),
# then on this build's own object files.
#   test_vector_moves.sh SOURCE_DIR BUILD_DIR APPLIED
# APPLIED: ON where CMakeLists.txt gave the build's units the assembler option (GCC, a named or
# native host CPU, an assembler that takes it); otherwise only the fixtures are checked.
set -uo pipefail
SRC=$1 BUILD=$2 APPLIED=$3
CHECK="$SRC/scripts/lib/check-vector-moves.sh"
CC=${CC:-cc}
for tool in "$CC" objdump; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool here to make and read the fixture objects"; exit 0; }
done
case "$(uname -m)" in
  x86_64 | amd64) ;;
  *) echo "skipped: the fixtures are x86 instructions and this is $(uname -m)"; exit 0 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../common/expect.sh
. "$SRC/tests/common/expect.sh"
object() {  # directory, name, instruction and its operands, extra compiler options...
  local dir=$1 name=$2 insn=$3; shift 3
  mkdir -p "$dir"
  printf 'void %s(double* p) { __asm__ volatile("%s" : : "r"(p) : "xmm1", "memory"); }\n' "$name" "$insn" >"$dir/$name.c"
  "$CC" -c "$@" -o "$dir/$name.o" "$dir/$name.c" || { echo "FAIL: $CC cannot assemble the fixture ($insn $*)"; exit 1; }
}

object "$tmp/aligned" load_aligned 'vmovapd (%0), %%ymm1'
object "$tmp/aligned/tests" load_unaligned 'vmovupd (%0), %%ymm1'
expect 1 "1 of the 2 object files hold aligned vector moves" "$CHECK" "$tmp/aligned"
expect 1 "load_aligned.o: 1 aligned vector moves" "$CHECK" "$tmp/aligned"
object "$tmp/integer" load_aligned 'vmovdqa (%0), %%ymm1'
expect 1 "vmovdqa" "$CHECK" "$tmp/integer"
object "$tmp/sse" store_aligned 'movaps %%xmm1, (%0)'
expect 1 "movaps" "$CHECK" "$tmp/sse"

option=(-Xassembler -muse-unaligned-vector-move)  # the build's spelling (CMakeLists.txt)
if "$CC" -c "${option[@]}" -o /dev/null -x c /dev/null 2>/dev/null; then
  object "$tmp/option" load_aligned 'vmovapd (%0), %%ymm1' "${option[@]}"
  object "$tmp/option" load_integer 'vmovdqa (%0), %%ymm1' "${option[@]}"
  expect 0 "no aligned vector move in the 2 object files" "$CHECK" "$tmp/option"
else
  echo "note: $CC's assembler does not take -muse-unaligned-vector-move: its fixture not made"
fi
object "$tmp/stream" store_stream 'vmovntpd %%ymm1, (%0)'
expect 0 "no aligned vector move in the 1 object files" "$CHECK" "$tmp/stream"  # non-temporal: on purpose

mkdir -p "$tmp/empty"
expect 1 "no object files under" "$CHECK" "$tmp/empty"
expect 2 "no directory" "$CHECK" "$tmp/missing"
expect 2 "usage:" "$CHECK"

if [ "$APPLIED" = ON ]; then
  # Every unit this build compiled (the option is on all of them; Kokkos is built outside it).
  expect 0 "no aligned vector move in the" "$CHECK" "$BUILD"
else
  echo "note: this build's units were not given -Xassembler -muse-unaligned-vector-move (no host CPU named, or not GCC): only the fixtures checked"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures of the checks above failed"
  exit 1
fi
echo "all passed"
