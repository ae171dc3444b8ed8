#!/usr/bin/env bash
# The mini-app as the ranks of a real Open MPI job (mpirun -np 2, oversubscribed on a 2-core
# machine, allowed as root), against the same deck on one rank:
#   1. a deck of what is split (the distance matrix and row outputs, x ** y, GEMM, batched solves,
#      gradient descent) runs on 2 ranks: exit 0, every measurement verified by both ranks, the work of the whole
#      problem (equal to one rank's run), the regression's exchange as its own phase, each rank's
#      host and CPUs recorded, one results set written by rank 0, and the advice over both runs
#      keeping the 2-rank runs as series of their own;
#   2. a deck of what is not split (the dense solver) is refused on 2 ranks before anything runs
#      (exit 2);
#   3. a verification failure on the ranks makes the job exit 1 with the results complete;
#   4. SIGTERM to mpirun reaches both ranks, between the distance's iterations and in the middle
#      of a regression fit (whose ranks exchange sums every step): the job ends without a hang, with
#      the finished measurements kept and the results marked interrupted.
#
#   tests/mpi/check_mpi_run.sh BINARY SOURCE_DIR MPIEXEC
set -uo pipefail

BIN=$(realpath "${1:?usage: check_mpi_run.sh BINARY SOURCE_DIR MPIEXEC}")
SRC=$(realpath "${2:?usage: check_mpi_run.sh BINARY SOURCE_DIR MPIEXEC}")
MPIEXEC=${3:?usage: check_mpi_run.sh BINARY SOURCE_DIR MPIEXEC}
PYTHON=/usr/bin/python3
WORK=$(mktemp -d /tmp/miniapp-mpi-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILURES=0
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
# Open MPI refuses root without these; 2 ranks on fewer cores need oversubscription.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
mpi() { timeout 300 "$MPIEXEC" -np 2 --bind-to none "$@"; }

# The cases of input/mpi-strong-scaling.yaml at sizes that take a second on two cores.
DECK=$WORK/split.yaml
cat > "$DECK" <<YAML
cases:
  - name: nearest-point
    workload: distance
    output: row-min
    sizes: [200, 333]
    precision: float32
    spaces: all
    policies: [host, all-resident]
  - name: row-sum
    workload: distance
    output: row-sum
    sizes: [333]
    precision: float64
    spaces: all
    policies: [host, all-resident]
  - name: distance-matrix
    workload: distance
    variant: direct
    sizes: [301]
    precision: float32
    spaces: all
    policies: [host, all-resident]
  - name: distance-matrix-streamed
    workload: distance
    variant: tiled
    chunk_rows: 40
    sizes: [301]
    precision: float64
    spaces: all
  - name: gemm
    workload: matrix
    variant: [gemm-naive, gemm-tiled]
    beta: 0.5
    sizes: [97]
    precision: [float32, float64]
    spaces: all
    policies: [host, all-resident]
  - name: power
    workload: matrix
    variant: elementwise
    rows: 3
    sizes: [1001]
    precision: [float32, float64]
    spaces: all
    policies: [host, all-resident]
  - name: batched-solves
    workload: solver
    variant: [batched-thread, batched-team]
    systems: 301
    sizes: [8, 12]
    precision: [float32, float64]
    spaces: all
    policies: [host, all-resident]
  - name: gradient-descent
    workload: regression
    variant: fused
    features: 4
    iterations: 200
    sizes: [3001]
    precision: [float32, float64]
    spaces: all
    policies: [host, all-resident]
YAML
for deck in mpi-strong-scaling mpi-weak-scaling; do
  "$BIN" "$SRC/input/$deck.yaml" --dry-run > /dev/null || fail "the shipped deck input/$deck.yaml does not validate"
done
"$BIN" "$SRC/input/mpi-weak-scaling.yaml" --case "ranks-2-*" --dry-run 2>&1 | grep -q "ranks-2-rows" || fail "--case ranks-2-* does not select the 2-rank cases"

echo "== 1. the split deck on one rank and on two"
"$BIN" "$DECK" -q --no-calibrate -o "$WORK/one" || fail "one rank: exit $?"
mpi "$BIN" "$DECK" -q -o "$WORK/two" > "$WORK/two.out" 2>&1
code=$?
[ $code -eq 0 ] || { cat "$WORK/two.out"; fail "two ranks: exit $code"; }
"$PYTHON" - "$WORK/one/results.json" "$WORK/two/results.json" <<'PY' || fail "two ranks' results"
import json, sys
one, two = (json.load(open(p)) for p in sys.argv[1:3])
problems = []
def expect(ok, what):
    if not ok:
        problems.append(what)
expect(two["status"] == "complete", f"status {two['status']}")
p1, p2 = one["provenance"], two["provenance"]
expect(p1["launcher"] == "" and [r["rank"] for r in p1["ranks"]] == [0], f"one rank's places: {p1['ranks']}")
expect(p2["launcher"] == "mpirun", f"launcher {p2['launcher']!r}")
expect([r["rank"] for r in p2["ranks"]] == [0, 1], f"ranks {p2['ranks']}")
expect(all(r["hostname"] == p2["hostname"] and r["cpus"] for r in p2["ranks"]), f"places {p2['ranks']}")
expect(two["calibration_skipped"].startswith("not measured under MPI"), two.get("calibration_skipped"))
expect(len(one["measurements"]) == len(two["measurements"]) > 0, "measurement counts differ")
for a, b in zip(one["measurements"], two["measurements"]):
    name = f"{b['case']} {b['size']} {b['space']} {b['policy']}"
    v = b["verification"]
    expect(v["passed"] and v["detail"].startswith("2 ranks, each checking its own part"), f"{name}: {v}")
    spread = b["ranks"]["median_seconds"]["total"]
    expect(b["ranks"]["count"] == 2 and 0 < spread["min"] <= spread["mean"] <= spread["max"], f"{name}: {b['ranks']}")
    expect(a["ranks"] is None, f"{name}: one rank recorded a spread")
    # Both ranks' parts add up to the whole problem's work.
    expect(abs(a["work"]["flops"] - b["work"]["flops"]) <= 1e-9 * a["work"]["flops"],
           f"{name}: flops {b['work']['flops']} on 2 ranks, {a['work']['flops']} on one")
    # The regression's ranks add their sums every step: that time is its own phase, within compute.
    exchanges = b["workload"] == "regression"
    expect(("communicate" in b["seconds"]) == exchanges and "communicate" not in a["seconds"],
           f"{name}: phases {sorted(b['seconds'])} on 2 ranks, {sorted(a['seconds'])} on one")
    if exchanges:
        c = b["seconds"]["communicate"]["samples"]
        expect(len(c) == len(b["seconds"]["compute"]["samples"]) and all(0 < x for x in c), f"{name}: communicate {c}")
expect(any(m["workload"] == "regression" for m in two["measurements"]), "no regression measured")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
[ -f "$WORK/two/results.csv" ] || fail "two ranks wrote no results.csv"
# The advice over both runs keeps the 2-rank runs as series of their own (ranks as a dimension).
if out=$("$BIN" advise "$WORK/one" "$WORK/two" 2>&1); then
  grep -q "serial x 2 ranks" <<<"$out" || { echo "$out" | head -40; fail "the advice names no 2-rank series"; }
  grep -q "duplicate" <<<"$out" && fail "the advice took the 2-rank runs for duplicates of the 1-rank ones"
else
  echo "$out" | tail -20; fail "advise over the 1- and 2-rank runs failed"
fi

echo "== 2. what is not split is refused on two ranks"
cat > "$WORK/dense.yaml" <<YAML
cases:
  - name: one-large-system
    workload: solver
    variant: dense-blocked
    sizes: 64
YAML
for deck in "$SRC/input/solver-seed001-one-large-system.yaml" "$WORK/dense.yaml"; do
  mpi "$BIN" "$deck" -o "$WORK/refused" > "$WORK/refused.out" 2>&1
  code=$?
  [ $code -eq 2 ] || fail "$deck on two ranks: exit $code, expected 2"
  grep -q "not split across MPI ranks" "$WORK/refused.out" || { cat "$WORK/refused.out"; fail "$deck: no reason given"; }
  [ ! -e "$WORK/refused/results.json" ] || fail "$deck: a refused deck wrote results"
done

echo "== 3. a verification failure on the ranks: exit 1"
cat > "$WORK/strict.yaml" <<YAML
cases:
  - name: too-strict
    workload: distance
    output: row-sum
    sizes: 300
    precision: float32
    spaces: all
    tolerance: 1.0e-30
    repetitions: 1
YAML
mpi "$BIN" "$WORK/strict.yaml" -q --no-calibrate -o "$WORK/strict" > "$WORK/strict.out" 2>&1
code=$?
[ $code -eq 1 ] || { cat "$WORK/strict.out"; fail "a failed verification on two ranks: exit $code, expected 1"; }
grep -q '"status": "complete"' "$WORK/strict/results.json" || fail "strict run not complete"

echo "== 4. SIGTERM to mpirun reaches both ranks"
cat > "$WORK/long-distance.yaml" <<YAML
cases:
  - name: long
    workload: distance
    output: row-min
    sizes: [400, 6000]
    precision: float64
    spaces: all
    repetitions: 50
YAML
# The long fit takes seconds: the signal comes between two of its steps' allreduces.
cat > "$WORK/long-regression.yaml" <<YAML
cases:
  - name: short-fit
    workload: regression
    variant: fused
    iterations: 100
    sizes: [500]
    precision: float64
    spaces: all
  - name: long-fit
    workload: regression
    variant: fused
    features: 8
    iterations: 200000
    sizes: [20000]
    precision: float64
    spaces: all
    repetitions: 3
YAML
interrupt() {  # DECK: SIGTERM to mpirun once one measurement is kept
  local deck=$1 out=$WORK/$(basename "$1" .yaml)
  "$MPIEXEC" -np 2 --bind-to none "$BIN" "$deck" -q --no-calibrate -o "$out" > "$out.out" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do
    grep -q '"finished_measurements": [1-9]' "$out/results.json" 2>/dev/null && break
    sleep 0.1
  done
  sleep 0.5  # into the next measurement's compute
  kill -TERM $pid
  for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then
    fail "$(basename "$deck"): mpirun still running 30 s after SIGTERM"
    kill -KILL $pid
  fi
  wait $pid
  local code=$?
  echo "  $(basename "$deck"): mpirun exited $code after SIGTERM"
  [ $code -ne 0 ] || fail "$(basename "$deck"): an interrupted job exited 0"
  "$PYTHON" - "$out/results.json" <<'PY' || { cat "$out.out"; fail "$(basename "$deck"): interrupted results"; }
import json, sys
r = json.load(open(sys.argv[1]))
finished = r["finished_measurements"]
ok = r["status"] == "interrupted" and 1 <= finished < r["planned_measurements"]
print(f"  status {r['status']}, {finished} of {r['planned_measurements']} measurements kept")
sys.exit(0 if ok else 1)
PY
  pgrep -f "$deck" > /dev/null && fail "$(basename "$deck"): a rank outlived the job"
}
interrupt "$WORK/long-distance.yaml"
interrupt "$WORK/long-regression.yaml"

[ $FAILURES -eq 0 ] && echo "all MPI checks passed" || echo "$FAILURES MPI check(s) failed"
[ $FAILURES -eq 0 ]
