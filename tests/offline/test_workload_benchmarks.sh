#!/usr/bin/env bash
# scripts/lib/workload-benchmarks.txt (what gpu-run.sh --benchmark-forms workloads runs) against the
# build: every variant `miniapp --list` names has a family there (WORKLOAD-VARIANT, or
# WORKLOAD-VARIANT-something where the variant's benchmarks name an operation, as elementwise's
# power and multiply), and every family there is one the benchmark program registers, unless
# --list marks its variant unavailable in this build (KokkosBatched on Kokkos Kernels 3.4.01).
#   test_workload_benchmarks.sh SOURCE_DIR MINIAPP MINIAPP_BENCHMARKS
set -uo pipefail
SRC=$1 MINIAPP=$2 BENCHMARKS=$3
failures=0
mapfile -t families < <(grep -v -e '^#' -e '^[[:space:]]*$' "$SRC/scripts/lib/workload-benchmarks.txt")
list=$(OMP_PROC_BIND=false "$MINIAPP" --list) || { echo "FAIL: $MINIAPP --list failed"; exit 1; }
# "  workload: ..." then "    - variant: ..." up to the spaces' section
variants=$(awk '/^execution spaces/ {exit} /^  [a-z]+: / {w = $1; sub(/:$/, "", w)}
                /^    - [a-z0-9-]+: / {v = $2; sub(/:$/, "", v); print w "-" v (/\[unavailable/ ? " unavailable" : "")}' <<<"$list")
[ "$(wc -l <<<"$variants")" -ge 10 ] || { echo "FAIL: fewer than 10 variants read from --list: $variants"; exit 1; }
registered=$(OMP_PROC_BIND=false "$BENCHMARKS" --benchmark_list_tests 2>/dev/null | sed -n 's|^\([a-z0-9-]*\)/.*|\1|p' | sort -u)
[ -n "$registered" ] || { echo "FAIL: $BENCHMARKS --benchmark_list_tests listed nothing"; exit 1; }
while read -r name state; do
  if printf '%s\n' "${families[@]}" | grep -qx -e "$name" -e "$name-[a-z]*"; then
    echo "ok: $name has its benchmark family in workload-benchmarks.txt"
  else echo "FAIL: the variant $name (miniapp --list) has no family in scripts/lib/workload-benchmarks.txt"
    failures=$((failures + 1)); fi
done <<<"$variants"
for f in "${families[@]}"; do
  if grep -qx "$f" <<<"$registered"; then echo "ok: $f is registered by the benchmark program"
  elif grep -qx "$f unavailable" <<<"$variants"; then echo "ok: $f not registered, its variant unavailable in this build"
  else echo "FAIL: workload-benchmarks.txt names $f, which $(basename "$BENCHMARKS") does not register"
    failures=$((failures + 1)); fi
done
[ "$failures" -eq 0 ] && echo "workload-benchmarks.txt matches the build" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
