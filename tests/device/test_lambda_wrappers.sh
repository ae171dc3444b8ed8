#!/usr/bin/env bash
# scripts/lib/check-lambda-wrappers.sh on object files made here with the C compiler, each
# defining a function under the mangled name of a member of nvcc's lambda wrapper
# (__nv_hdl_wrapper_t), as a CUDA build's units do: global (weak, as an inline instantiation is)
# in two objects is the fault it exists for; local to a unit (what MINIAPP_KERNEL_UNIT gives) in
# one of them, or in one object only, is not.
#   test_lambda_wrappers.sh SOURCE_DIR
set -uo pipefail
SRC=$1
CHECK="$SRC/scripts/lib/check-lambda-wrappers.sh"
CC=${CC:-cc}
for tool in "$CC" nm c++filt; do
  command -v "$tool" >/dev/null || { echo "skipped: no $tool here to make and read the fixture objects"; exit 0; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../common/expect.sh
. "$SRC/tests/common/expect.sh"
wrapper=_ZN18__nv_hdl_wrapper_tILb0ELb0ELb0E7KernelAE4copyEPv  # __nv_hdl_wrapper_t<...>::copy(void*)
object() {  # directory, name, linkage (weak or static)
  mkdir -p "$1"
  local attribute="__attribute__((weak))"
  [ "$3" = static ] && attribute="static __attribute__((used))"
  printf '%s int %s(void* p) { return p != 0; }\n' "$attribute" "$wrapper" >"$1/$2.c"
  "$CC" -c -o "$1/$2.o" "$1/$2.c" || { echo "FAIL: $CC cannot compile the fixture"; exit 1; }
}

object "$tmp/shared" workload_serial weak
object "$tmp/shared/tests" test_solver weak
expect 1 "1 lambda wrappers are defined in more than one object file" "$CHECK" "$tmp/shared"
expect 1 "workload_serial.o" "$CHECK" "$tmp/shared"
expect 1 "__nv_hdl_wrapper_t<false, false, false, KernelA>::copy(void*)" "$CHECK" "$tmp/shared"  # demangled

object "$tmp/unit-local" workload_serial weak
object "$tmp/unit-local" test_solver static
expect 0 "no __host__ __device__ lambda wrapper is shared between the 2 object files" "$CHECK" "$tmp/unit-local"

object "$tmp/one" workload_serial weak
expect 0 "between the 1 object files" "$CHECK" "$tmp/one"

mkdir -p "$tmp/empty"
expect 1 "no object files under" "$CHECK" "$tmp/empty"
expect 2 "no directory" "$CHECK" "$tmp/missing"
expect 2 "usage:" "$CHECK"
expect 2 "usage:" "$CHECK" "$tmp/one" "$tmp/shared"

if [ "$failures" -gt 0 ]; then
  echo "$failures of the checks above failed"
  exit 1
fi
echo "all passed"
