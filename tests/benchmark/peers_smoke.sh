#!/usr/bin/env bash
# ctest `benchmark.peers` (label `benchmark`): benchmarks/peers.py --quick, one round of small
# sizes, must run every row with the mini-app's results verified and print its table, with the
# GPU peers' table (--gpu-peers beside the serial space: each library run or its reason); then
# check_gpu_peers.py checks the GPU peers' forms without a GPU; then --deadline stops before a
# round that would end past it, and a run killed between rounds keeps the rounds it finished in
# its --json and --markdown files. Never judged on time. Debian's
# python3-numpy and python3-numba come through scripts/bootstrap-debian.sh --report-packages;
# "skipped: <why>" (ctest: skipped) only where no package archive offers NumPy.
#   peers_smoke.sh MINIAPP SOURCE_DIR
set -uo pipefail
MINIAPP=${1:?usage: peers_smoke.sh MINIAPP SOURCE_DIR}
SRC=${2:?usage: peers_smoke.sh MINIAPP SOURCE_DIR}

if ! /usr/bin/python3 -c 'import numpy, numba' 2>/dev/null; then
  log=$(mktemp)
  "$SRC/scripts/bootstrap-debian.sh" --report-packages >"$log" 2>&1
  status=$?
  if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    if command -v apt-cache >/dev/null 2>&1 && apt-cache policy python3-numpy 2>/dev/null | grep -qE 'Candidate: [0-9]'; then
      tail -n 20 "$log"
      rm -f "$log"
      echo "FAIL: the package archive has python3-numpy but installing it failed (bootstrap exit $status, output above)"
      exit 1
    fi
    rm -f "$log"
    echo "skipped: python3-numpy cannot be installed here (no package archive offers it)"
    exit 0
  fi
  if ! /usr/bin/python3 -c 'import numba' 2>/dev/null && command -v apt-cache >/dev/null 2>&1 \
    && apt-cache policy python3-numba 2>/dev/null | grep -qE 'Candidate: [0-9]'; then
    tail -n 20 "$log"
    rm -f "$log"
    echo "FAIL: the package archive has python3-numba but installing it failed (bootstrap exit $status, output above)"
    exit 1
  fi
  rm -f "$log"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# --update: a file without the markers is refused before anything runs; with them, the block
# between them is replaced and the rest kept.
printf 'no markers here\n' >"$out/plain.md"
/usr/bin/python3 "$SRC/benchmarks/peers.py" --quick --miniapp "$MINIAPP" --update "$out/plain.md" >"$out/refused.log" 2>&1
status=$?
[ "$status" -eq 2 ] && grep -q "no single" "$out/refused.log" \
  || { cat "$out/refused.log"; echo "FAIL: --update on a file without markers exited $status"; exit 1; }
printf 'above\n<!-- peers.py begin -->\nold table\n<!-- peers.py end -->\nbelow\n' >"$out/page.md"
# OMP_PROC_BIND in the script's own environment: NumPy's OpenMP runtime then binds the script's
# main thread to one CPU as it loads, and the mini-app must still get every CPU the script had.
OMP_PROC_BIND=spread OMP_PLACES=threads /usr/bin/python3 "$SRC/benchmarks/peers.py" --quick --miniapp "$MINIAPP" --json "$out/peers.json" \
  --update "$out/page.md" --gpu-peers --gpu-space serial || {
  echo "FAIL: peers.py exited with $?"
  exit 1
}
grep -q "old table" "$out/page.md" && { cat "$out/page.md"; echo "FAIL: --update left the old block"; exit 1; }
[ "$(head -n 2 "$out/page.md")" = "$(printf 'above\n<!-- peers.py begin -->')" ] \
  && [ "$(tail -n 2 "$out/page.md")" = "$(printf '<!-- peers.py end -->\nbelow')" ] \
  && grep -q "^| workload | NumPy form |" "$out/page.md" \
  || { cat "$out/page.md"; echo "FAIL: --update did not put the table between the markers, the rest kept"; exit 1; }
# Every row of the table must have both sides measured: at least one variant per workload row.
/usr/bin/python3 - "$out/peers.json" <<'PY' || exit 1
import json, sys
data = json.load(open(sys.argv[1]))
if data["miniapp_cpus_allowed"] != data["start_cpus"]:
    print(f"FAIL: the mini-app could use {data['miniapp_cpus_allowed']} CPU(s), peers.py started with "
          f"{data['start_cpus']}")
    sys.exit(1)
rows = data["rows"]
workloads = {r["workload"].split(",")[0].split(" ")[0] for r in rows}
bad = [r for r in rows if not (r["numpy_ms"] > 0 and r["miniapp_ms"] > 0)]
if bad or len({r["workload"] for r in rows}) < 6:
    print(f"FAIL: {len({r['workload'] for r in rows})} of 6 rows measured; without a time: {bad}")
    sys.exit(1)
print(f"ok: {len(rows)} mini-app variants beside their NumPy forms")
gpu = data["gpu_peers"]
accounted = sorted(list(gpu["libraries"]) + list(gpu["not_run"]))
if accounted != ["CuPy", "JAX", "Numba", "PyTorch"] or not all(gpu["not_run"].values()):
    print(f"FAIL: the GPU peers: run {gpu['libraries']}, not run {gpu['not_run']}")
    sys.exit(1)
if gpu["space"] != "serial" or len(gpu["rows"]) != len(rows):
    print(f"FAIL: the GPU peers' table has {len(gpu['rows'])} mini-app rows on {gpu['space']}, expected {len(rows)} on serial")
    sys.exit(1)
print(f"ok: GPU peers run: {gpu['libraries'] or 'none'}; not run: {gpu['not_run']}")
PY
grep -q "^Not run: \|^| workload | mini-app variant | mini-app ms |" "$out/page.md" \
  || { cat "$out/page.md"; echo "FAIL: the GPU peers' part of the table is missing"; exit 1; }
/usr/bin/python3 "$SRC/tests/benchmark/check_gpu_peers.py" || { echo "FAIL: check_gpu_peers.py"; exit 1; }
# --deadline: no round starts that would end past it (the first always runs), and the tables say
# how many ran of how many were asked.
/usr/bin/python3 "$SRC/benchmarks/peers.py" --quick --rounds 3 --deadline 0.001 --miniapp "$MINIAPP" \
  --json "$out/deadline.json" --markdown "$out/deadline.md" >"$out/deadline.log" 2>&1 \
  || { cat "$out/deadline.log"; echo "FAIL: peers.py --deadline exited with $?"; exit 1; }
grep -q "stopping after 1 of 3 rounds" "$out/deadline.log" && grep -q "medians of 1 (of 3 asked) alternating rounds" "$out/deadline.md" \
  && /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d["rounds"] == 1 and d["rounds_asked"] == 3))' "$out/deadline.json" \
  || { cat "$out/deadline.log" "$out/deadline.md"; echo "FAIL: --deadline did not stop after the first round, or the tables do not say so"; exit 1; }
echo "ok: --deadline stopped after 1 of 3 rounds, and the tables say so"
# Killed between rounds, the rounds it finished are in its files (written after each round).
/usr/bin/python3 "$SRC/benchmarks/peers.py" --quick --rounds 1000 --miniapp "$MINIAPP" --json "$out/killed.json" \
  --markdown "$out/killed.md" >"$out/killed.log" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q "^round 1/1000 done" "$out/killed.log" && break; sleep 0.1; done
kill -TERM "$pid"; wait "$pid"
grep -q "^round 1/1000 done" "$out/killed.log" || { cat "$out/killed.log"; echo "FAIL: no round finished in 60 s"; exit 1; }
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (1 <= d["rounds"] < 1000 and d["rounds_asked"] == 1000 and d["rows"]))' "$out/killed.json" \
  && grep -q "of 1000 asked" "$out/killed.md" \
  || { cat "$out/killed.log"; echo "FAIL: the killed run's files do not hold the rounds it finished"; exit 1; }
echo "ok: killed after $(grep -c '^round .* done' "$out/killed.log") round(s), its files hold them"
