#!/usr/bin/env bash
# Loads tests/tools/region_tree.cpp's library into the mini-app the way a user loads a Kokkos
# Tools library (both KOKKOS_PROFILE_LIBRARY, read by Kokkos 3.4, and KOKKOS_TOOLS_LIBS, read from
# 3.7 on, set to the same path), runs one small case per workload and checks the tree it wrote:
# each measurement a region <case>/<space>/<policy>/<precision>/<size>, each of its phases a
# region in it, each workload's kernels under its compute region, under their labels.
# usage: run_region_tree_test.sh MINIAPP TOOL_LIBRARY
set -uo pipefail
MINIAPP=${1:?usage: run_region_tree_test.sh MINIAPP TOOL_LIBRARY}
TOOL=${2:?usage: run_region_tree_test.sh MINIAPP TOOL_LIBRARY}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; [ -f "$WORK/tree.txt" ] && cat "$WORK/tree.txt"; exit 1; }

# The first host space compiled in (the deck's policy is `host`).
space=$("$MINIAPP" --list | awk '/^execution spaces compiled in:/ {on = 1; next} on && /\(host\)/ {print $1; exit}')
[ -n "$space" ] || fail "no host space in miniapp --list"
cat >"$WORK/deck.yaml" <<DECK
cases:
  - {name: power, workload: matrix, variant: elementwise, op: power, rows: 3, sizes: [1000]}
  - {name: distance, workload: distance, variant: direct, sizes: [40]}
  - {name: solver, workload: solver, variant: batched-thread, systems: 6, sizes: [5]}
  - {name: fit, workload: regression, variant: fused, iterations: 4, sizes: [50]}
defaults: {policies: [host], warmup: 1, repetitions: 2, precision: float64}
DECK
MINIAPP_REGION_TREE_OUTPUT="$WORK/tree.txt" KOKKOS_PROFILE_LIBRARY="$TOOL" KOKKOS_TOOLS_LIBS="$TOOL" \
  "$MINIAPP" "$WORK/deck.yaml" --no-calibrate -q -o "$WORK/out" --spaces "$space" >"$WORK/run.log" 2>&1 \
  || { cat "$WORK/run.log"; fail "the mini-app failed with the tool loaded"; }
[ -s "$WORK/tree.txt" ] || { cat "$WORK/run.log"; fail "the tool wrote no tree: Kokkos did not load it"; }

# The measurement's region at the top; its phases in it, with (for compute) the workload's kernel
# right under it.
for case in "power matrix/elementwise matrix::" "distance distance/direct distance::" \
            "solver solver/batched-thread solver::" "fit regression/fused regression::"; do
  set -- $case
  grep -qE "^region $1/$space/host/float64/[0-9]+ x1$" "$WORK/tree.txt" || fail "no top-level region for case $1"
  for phase in allocate generate compute verify; do
    grep -qE "^  region $2/$phase x[0-9]+$" "$WORK/tree.txt" || fail "no region $2/$phase in its measurement's"
  done
  grep -qE "^  region $2/compute x3$" "$WORK/tree.txt" || fail "$2/compute is not entered 3 times (1 warm-up, 2 repetitions)"
  awk -v top="  region $2/compute " -v want="    kernel $3" 'index($0, top) == 1 {on = 1; next}
      /^region |^  region / {on = 0} on && index($0, want) == 1 {found = 1} END {exit !found}' "$WORK/tree.txt" \
    || fail "no $3 kernel under $2/compute"
done
# Every kernel sits inside a phase.
if grep -qE "^(  )?kernel " "$WORK/tree.txt"; then fail "kernels outside every phase"; fi
# --kernel-times would take Kokkos' callbacks from the loaded tool: refused with exit 2, nothing measured.
MINIAPP_REGION_TREE_OUTPUT="$WORK/tree-refused.txt" KOKKOS_PROFILE_LIBRARY="$TOOL" KOKKOS_TOOLS_LIBS="$TOOL" \
  "$MINIAPP" "$WORK/deck.yaml" --kernel-times --no-calibrate -q -o "$WORK/refused" --spaces "$space" \
  >"$WORK/refused.log" 2>&1
code=$?
[ "$code" = 2 ] || { cat "$WORK/refused.log"; fail "--kernel-times beside a Kokkos Tools library exited $code, not 2"; }
grep -q "already listens" "$WORK/refused.log" || { cat "$WORK/refused.log"; fail "the refusal does not say why"; }
[ ! -e "$WORK/refused" ] || fail "the refused run created its output directory"
echo "region tree of $(grep -c . "$WORK/tree.txt") nodes: every measurement and phase a region, every workload's kernels in its compute region"
