#!/usr/bin/env bash
# ctest `benchmark.smoke` (label `benchmark`): every Google Benchmark of the suite that the filter
# keeps runs once (one short iteration) and must finish without an error. Never judged on time.
#   smoke_benchmarks.sh BENCHMARK_BINARY [FILTER]
set -uo pipefail
BIN=${1:?usage: smoke_benchmarks.sh BENCHMARK_BINARY [FILTER]}
FILTER=${2:-.}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

listed=$("$BIN" --benchmark_list_tests --benchmark_filter="$FILTER" 2>/dev/null | grep -c '/')
[ "$listed" -gt 0 ] || { echo "FAIL: the filter '$FILTER' selects no benchmark"; exit 1; }
# A minimum time of 0 stops every benchmark after its first iteration.
"$BIN" --benchmark_filter="$FILTER" --benchmark_min_time=0 --benchmark_repetitions=1 \
  --benchmark_out="$out/smoke.json" --benchmark_out_format=json >"$out/stdout" 2>"$out/stderr"
status=$?
if [ $status -ne 0 ]; then
  tail -n 30 "$out/stdout" "$out/stderr"
  echo "FAIL: the benchmarks exited with $status"
  exit 1
fi
ran=$(grep -c '"run_name"' "$out/smoke.json")
errors=$(grep -c '"error_occurred": true' "$out/smoke.json")
if [ "$errors" -ne 0 ]; then
  grep -B3 -A3 '"error_occurred": true' "$out/smoke.json" | grep -E '"name"|error_message'
  echo "FAIL: $errors benchmark(s) reported an error"
  exit 1
fi
[ "$ran" -eq "$listed" ] || { cat "$out/stdout"; echo "FAIL: $listed benchmarks listed but $ran ran"; exit 1; }
echo "ok: $ran benchmarks ran once each without an error"
