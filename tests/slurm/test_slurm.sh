#!/usr/bin/env bash
# `miniapp submit`, `merge` and `queue-wait` against a real one-node Slurm with accounting
# (scripts/slurm/test-cluster.sh: munged, MariaDB, slurmdbd, slurmctld, slurmd), no mocks:
#   1. every shipped profile's script (CPU and GPU job) passes `sbatch --test-only` in a partition
#      named like the site's; a placeholder account is refused before sbatch, a wrong one by Slurm;
#   2. a small deck as a plain job and as a 3-task array (+ its merge job): every result, its
#      provenance (job id, array task, node list, CPUs) and the merged set;
#   3. the CPU/GPU twin: GPU variables in the GPU job's provenance, the side-by-side table;
#   4. scancel (SIGTERM) of a running job keeps its finished measurements, merge reports it;
#   5. queue-wait on the cluster's accounting;
#   6. an MPI job (`submit --ranks 2`, srun --mpi=pmix): both ranks in one results set, the
#      regression's exchange recorded; two tasks without an MPI plugin refused; scancel of a
#      2-rank job reaches both ranks and keeps the finished measurements;
#   7. every results file against the schema; every daemon stopped by PID (also on failure).
#
#   tests/slurm/test_slurm.sh BINARY SOURCE_DIR
#
# Prints "skipped: <reason>" and exits 0 only when it cannot be root or the packages cannot be
# installed. MINIAPP_SLURM_KEEP=1 keeps the work directory.
set -uo pipefail

BIN=$(realpath "${1:?usage: test_slurm.sh BINARY SOURCE_DIR}")
SRC=$(realpath "${2:?usage: test_slurm.sh BINARY SOURCE_DIR}")
CLUSTER_SH=$SRC/scripts/slurm/test-cluster.sh
readonly JOB_TIMEOUT=120
T0=$SECONDS

[ "$(id -u)" -eq 0 ] || { echo "skipped: the test cluster's daemons run as root and this is uid $(id -u)"; exit 0; }
"$CLUSTER_SH" install
case $? in
  0) ;;
  77) echo "skipped: the Slurm, munge and MariaDB packages are missing and cannot be installed"; exit 0 ;;
  *) echo "FAIL: installing the packages"; exit 1 ;;
esac

WORK=$(mktemp -d /tmp/miniapp-slurm-test.XXXXXX)
chmod 755 "$WORK"
CLUSTER=$WORK/cluster
FAILURES=0
cleanup() {
  local status=$?
  if [ -f "$CLUSTER/pids" ]; then
    "$CLUSTER_SH" stop "$CLUSTER" || { echo "FAIL: stopping the cluster"; status=1; }
    # Every daemon it started must be gone.
    while read -r name pid; do
      if kill -0 "$pid" 2>/dev/null; then echo "FAIL: $name (PID $pid) still runs"; status=1; fi
    done <"$CLUSTER/pids"
  fi
  if [ "$status" -ne 0 ] || [ "${MINIAPP_SLURM_KEEP:-0}" = 1 ]; then
    echo "work directory kept: $WORK"
    [ "$status" -ne 0 ] && for log in "$CLUSTER"/log/slurmctld.log "$CLUSTER"/log/slurmd.log; do
      [ -f "$log" ] && { echo "---- end of $log"; tail -n 15 "$log"; }
    done
  else
    rm -rf "$WORK"
  fi
  echo "slurm test: $((SECONDS - T0)) s in all"
  exit "$status"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
ok() { echo "ok    $*"; }
section() { echo; echo "== $* ($((SECONDS - T0)) s)"; }

section "starting the cluster"
start=$SECONDS
"$CLUSTER_SH" start "$CLUSTER" || { echo "FAIL: the cluster did not start"; exit 1; }
echo "cluster up in $((SECONDS - start)) s"
# shellcheck disable=SC1091
. "$CLUSTER/env"
ACCOUNT=$MINIAPP_TEST_ACCOUNT
cd "$WORK" || exit 1
sinfo -o "%P %a %D %c %m %G"

cat >small.yaml <<'EOF'
title: Slurm test deck
cases:
  - name: distance-small
    workload: distance
    sizes: [32, 48]
    spaces: [serial, openmp]
    policies: [host]
    repetitions: 2
  - name: matrix-small
    workload: matrix
    variant: elementwise
    sizes: 64
    spaces: [serial, openmp]
    policies: [host]
    repetitions: 2
EOF
# Long enough to be cancelled mid-run: 12 measurements from 0.1 s to 3 s each, on one space.
cat >slow.yaml <<'EOF'
title: Slurm test deck, cancelled
cases:
  - name: gemm-slow
    workload: matrix
    variant: gemm-naive
    precision: float64
    sizes: {from: 192, to: 896, step: 64}
    spaces: [serial]
    policies: [host]
    repetitions: 5
EOF

# Waits until every job (an array job: every task) has ended, in the queue and in the accounting.
wait_jobs() {
  local deadline=$((SECONDS + JOB_TIMEOUT)) id states pending
  while :; do
    pending=$(squeue -h -j "$(IFS=,; echo "$*")" -t PD,CF,R,CG,S,RQ,RS -o %i 2>/dev/null)
    if [ -z "$pending" ]; then
      pending=
      for id in "$@"; do
        states=$(sacct -n -X -P -o State -j "$id" 2>/dev/null)
        if [ -z "$states" ] || grep -qE 'PENDING|RUNNING|REQUEUED|RESIZING|SUSPENDED|COMPLETING' <<<"$states"; then
          pending="$pending $id"
        fi
      done
      [ -z "$pending" ] && return 0
    fi
    if [ $SECONDS -ge $deadline ]; then
      fail "jobs$(printf ' %s' $pending) did not end within ${JOB_TIMEOUT}s"
      squeue
      return 1
    fi
    sleep 0.5
  done
}

# Waits until job JOB has kept N measurements in RESULTS (its results.json), checks that it still
# runs, then cancels it (SIGTERM) and waits for it to end: cancel_after JOB RESULTS N DECK
cancel_after() {
  local job=$1 results=$2 n=$3 deck=$4 deadline=$((SECONDS + JOB_TIMEOUT)) state
  while ! python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['finished_measurements'] >= int(sys.argv[2]) else 1)" "$results" "$n" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { fail "job $job finished no $n measurement(s) within ${JOB_TIMEOUT}s"; break; }
    sleep 0.3
  done
  state=$(squeue -h -j "$job" -o %T 2>/dev/null)
  echo "job $job is $state with $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['finished_measurements'], 'of', r['planned_measurements'])" "$results" 2>/dev/null) measurements; scancel $job"
  [ "$state" = RUNNING ] || fail "job $job should still run before scancel (is $state): make $deck slower"
  scancel "$job"
  wait_jobs "$job" >/dev/null
}

# python3 checks on a results.json: json_check FILE 'python expression over r' description
json_check() {
  local file=$1 expr=$2 what=$3
  if [ ! -f "$file" ]; then fail "$what: $file does not exist"; return; fi
  if python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($expr) else 1)" "$file"; then
    ok "$what"
  else
    fail "$what ($file)"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(' status', r.get('status'), r.get('error',''), 'env', {k: v for k, v in r.get('provenance',{}).get('environment',{}).items() if k.startswith(('SLURM_JOB','SLURM_ARRAY','SLURM_CPUS','CUDA','OMP_NUM'))})" "$file" || true
  fi
}

section "1. every shipped profile's scripts against sbatch --test-only"
for profile in "$SRC"/sites/*.yaml; do
  site=$(basename "$profile" .yaml)
  [ "$site" = local ] && continue
  for kind in cpu gpu; do
    script=$WORK/scripts/$site-$kind.sbatch
    out=$("$BIN" submit small.yaml --site "$site" --$kind --account "$ACCOUNT" --results "$WORK/results" --script "$script" 2>&1)
    code=$?
    if [ $code -eq 2 ] && grep -q "has no $kind section" <<<"$out"; then continue; fi
    [ $code -eq 0 ] || { fail "submit --site $site --$kind: exit $code: $out"; continue; }
    partition=$(sed -n 's/^#SBATCH --partition=//p' "$script")
    answer=$(sbatch --test-only "$script" 2>&1)
    if [ $? -eq 0 ] && grep -q "to start at .* in partition ${partition:-debug}" <<<"$answer"; then
      ok "$site $kind: $(grep -o 'using .*' <<<"$answer")"
    else
      fail "$site $kind: sbatch --test-only: $answer"
    fi
  done
done
out=$("$BIN" submit small.yaml --site puhti --gpu --submit 2>&1)
if [ $? -eq 2 ] && grep -q "still the placeholder '<project>'" <<<"$out"; then ok "placeholder account refused: $out"
else fail "placeholder account not refused: $out"; fi
out=$("$BIN" submit small.yaml --site mahti --gpu --account no-such-account --results "$WORK/results" --submit 2>&1)
if [ $? -eq 3 ] && grep -qi "invalid account" <<<"$out"; then ok "Slurm refuses an unknown account: $(tail -n 1 <<<"$out")"
else fail "an unknown account was not refused by Slurm: $out"; fi
out=$("$BIN" submit small.yaml --site lumi --gpu --account "$ACCOUNT" --results "$WORK/results" --test-only 2>&1)
if [ $? -eq 0 ] && grep -q "in partition small-g" <<<"$out"; then ok "submit --test-only (lumi)"; else fail "submit --test-only: $out"; fi
out=$("$BIN" submit small.yaml --site kestrel --gpu --gpus 5 --account "$ACCOUNT" --print 2>&1)
if [ $? -eq 2 ] && grep -q "a node has 4" <<<"$out"; then ok "5 GPUs refused on kestrel"; else fail "5 GPUs on kestrel: $out"; fi

section "2a. a plain job"
out=$("$BIN" submit small.yaml --site generic-cpu --cpus 2 --results "$WORK/results" --submit 2>&1)
echo "$out"
plain=$(sed -n 's/^submitted cpu job \([0-9]*\) .*/\1/p' <<<"$out")
section "2b. a 3-task array and its merge job"
out=$("$BIN" submit small.yaml --site generic-cpu --cpus 1 --array --throttle 2 --results "$WORK/results" --submit 2>&1)
echo "$out"
array=$(sed -n 's/^submitted cpu job \([0-9]*\) .*/\1/p' <<<"$out")
array_merge=$(sed -n 's/^submitted merge job \([0-9]*\) .*/\1/p' <<<"$out")
section "3. the CPU/GPU twin"
out=$("$BIN" submit small.yaml --site generic-gpu --cpus 1 --twin --results "$WORK/results" --submit 2>&1)
echo "$out"
twin_cpu=$(sed -n 's/^submitted cpu job \([0-9]*\) .*/\1/p' <<<"$out")
twin_gpu=$(sed -n 's/^submitted gpu job \([0-9]*\) .*/\1/p' <<<"$out")
twin_merge=$(sed -n 's/^submitted merge job \([0-9]*\) .*/\1/p' <<<"$out")
for id in plain array array_merge twin_cpu twin_gpu twin_merge; do
  [ -n "${!id}" ] || fail "no job id for $id"
done
grep -q "^#SBATCH --array=0-2%2$" "$WORK"/results/jobs/small-generic-cpu-cpu-array.sbatch && ok "array directive --array=0-2%2" \
  || fail "no --array=0-2%2 in the array script"

if [ $FAILURES -eq 0 ]; then
  wait_jobs "$plain" "$array" "$array_merge" "$twin_cpu" "$twin_gpu" "$twin_merge"
  sacct -X -o JobID,JobName%22,Partition,Account,AllocCPUS,AllocTRES%40,State,ExitCode -j \
    "$plain,$array,$array_merge,$twin_cpu,$twin_gpu,$twin_merge"

  R=$WORK/results
  json_check "$R/small-$plain/results.json" \
    "r['status'] == 'complete' and r['finished_measurements'] == 6 and len(r['measurements']) == 6 and all(m['verification']['passed'] for m in r['measurements'])" \
    "plain job: complete, 6 measurements verified"
  json_check "$R/small-$plain/results.json" \
    "r['provenance']['environment']['SLURM_JOB_ID'] == '$plain' and r['provenance']['environment']['SLURM_JOB_NODELIST'] == 'node1' and r['provenance']['environment']['SLURM_CPUS_PER_TASK'] == '2' and r['provenance']['environment']['OMP_NUM_THREADS'] == '2' and r['provenance']['host_threads'] == 2" \
    "plain job: provenance has the job id, node list, 2 CPUs per task and 2 threads"
  [ "$(sacct -n -X -P -o State,ExitCode -j "$plain")" = "COMPLETED|0:0" ] && ok "plain job: sacct COMPLETED 0:0" \
    || fail "plain job: sacct says $(sacct -n -X -P -o State,ExitCode -j "$plain")"

  expected=("distance-small 32" "distance-small 48" "matrix-small 64")
  for t in 0 1 2; do
    read -r case size <<<"${expected[$t]}"
    json_check "$R/small-$array/task-$t/results.json" \
      "r['status'] == 'complete' and r['finished_measurements'] == 2 and {(m['case'], m['size']) for m in r['measurements']} == {('$case', $size)} and r['provenance']['environment']['SLURM_ARRAY_JOB_ID'] == '$array' and r['provenance']['environment']['SLURM_ARRAY_TASK_ID'] == '$t'" \
      "array task $t: $case size $size, array job $array task $t in the provenance"
  done
  [ "$(sacct -n -X -P -o State -j "$array" | sort | uniq -c | awk '{print $1, $2}')" = "3 COMPLETED" ] \
    && ok "array: sacct shows 3 COMPLETED tasks" || fail "array: sacct: $(sacct -n -X -P -o JobID,State -j "$array" | tr '\n' ' ')"
  json_check "$R/small-$array/merged/results.json" \
    "r['status'] == 'complete' and len(r['tasks']) == 3 and len(r['measurements']) == 6 and [c['name'] for c in r['deck']['cases']] == ['distance-small', 'matrix-small'] and r['deck']['cases'][0]['sizes'] == [32, 48] and sorted({m['task'] for m in r['measurements']}) == [0, 1, 2]" \
    "array merged by its dependent job: 3 tasks, 6 measurements, both cases"
  rows=$(($(wc -l <"$R/small-$array/merged/results.csv") - 1))
  [ "$rows" -eq 12 ] && ok "merged CSV: 12 rows (6 measurements x 2 repetitions)" || fail "merged CSV has $rows rows, expected 12"
  grep -q "3 task(s): 3 complete" "$R"/miniapp-small-merge-"$array_merge".out \
    && ok "merge job log: 3 task(s): 3 complete" || fail "merge job log: $(cat "$R"/miniapp-small-merge-"$array_merge".out)"

  json_check "$R/small-gpu-$twin_gpu/results.json" \
    "r['status'] == 'complete' and r['provenance']['environment'].get('SLURM_JOB_GPUS', '') != '' and 'CUDA_VISIBLE_DEVICES' in r['provenance']['environment'] and r['provenance']['environment'].get('SLURM_GPUS_ON_NODE') == '1'" \
    "twin GPU job: SLURM_JOB_GPUS, SLURM_GPUS_ON_NODE, CUDA_VISIBLE_DEVICES in the provenance"
  json_check "$R/small-cpu-$twin_cpu/results.json" \
    "r['status'] == 'complete' and 'SLURM_JOB_GPUS' not in r['provenance']['environment'] and {m['space'] for m in r['measurements']} <= {'serial', 'openmp', 'threads'}" \
    "twin CPU job: host spaces only, no GPU"
  sacct -n -X -P -o AllocTRES -j "$twin_gpu" | grep -q "gres/gpu=1" && ok "twin GPU job: sacct AllocTRES has gres/gpu=1" \
    || fail "twin GPU job: sacct AllocTRES $(sacct -n -X -P -o AllocTRES -j "$twin_gpu")"
  twin_log=$R/miniapp-small-merge-$twin_merge.out
  if grep -q "^side by side" "$twin_log" && grep -q "small-cpu-$twin_cpu" "$twin_log" && grep -q "small-gpu-$twin_gpu" "$twin_log" \
     && [ "$(grep -c '^distance-small\|^matrix-small' "$twin_log")" -eq 3 ]; then
    ok "twin side by side (dependent job's log):"; sed -n '/^side by side/,$p' "$twin_log"
  else
    fail "twin side-by-side output: $(cat "$twin_log")"
  fi
  json_check "$R/small-twin-$twin_cpu-$twin_gpu/results.json" "r['status'] == 'complete' and len(r['tasks']) == 2" \
    "twin merged results: 2 tasks"
fi

section "4. scancel (SIGTERM) of a running job"
out=$("$BIN" submit slow.yaml --site generic-cpu --cpus 1 --results "$WORK/results" --submit 2>&1)
slow=$(sed -n 's/^submitted cpu job \([0-9]*\) .*/\1/p' <<<"$out")
slow_results=$WORK/results/slow-$slow/results.json
if [ -n "$slow" ]; then cancel_after "$slow" "$slow_results" 2 slow.yaml
else fail "no job id for the job to cancel: $out"; fi
sacct -X -o JobID,JobName%22,State,ExitCode,Elapsed -j "$slow"
json_check "$slow_results" \
  "r['status'] == 'interrupted' and 'signal 15' in r.get('error', '') and 2 <= r['finished_measurements'] < r['planned_measurements'] and len(r['measurements']) == r['finished_measurements'] and all(m['verification']['passed'] for m in r['measurements'])" \
  "cancelled job: interrupted by signal 15, finished measurements kept and verified"
sacct -n -X -P -o State -j "$slow" | grep -q '^CANCELLED' && ok "sacct: CANCELLED" || fail "sacct state $(sacct -n -X -P -o State -j "$slow")"
out=$("$BIN" merge "$WORK/results/slow-$slow" "$WORK/results/small-$plain" 2>&1)
code=$?
if [ $code -eq 3 ] && grep -q "slow-$slow (job $slow): interrupted: .*signal 15; [0-9]* of 12 measurements kept" <<<"$out"; then
  ok "merge reports the cancelled job as interrupted (exit 3):"; head -n 3 <<<"$out"
else
  fail "merge of the cancelled job: exit $code: $out"
fi

section "5. queue-wait on the cluster's accounting"
out=$("$BIN" queue-wait -p debug,gpu --since now-1hours 2>&1)
code=$?
echo "$out"
if [ $code -eq 0 ] && grep -qP '^debug\t.*\([0-9]+\)' <<<"$out" && grep -qP '^gpu\t.*\([0-9]+\)' <<<"$out"; then
  ok "queue-wait: debug and gpu rows with job counts"
else
  fail "queue-wait: exit $code"
fi
out=$("$BIN" queue-wait -p somenonexistentpartition --since now-1hours 2>&1)
if [ $? -eq 2 ] && grep -q "^error - please call sacct for existing partition(s)" <<<"$out"; then ok "queue-wait: $out"
else fail "queue-wait with an unknown partition: $out"; fi

section "6. an MPI job: two ranks as the tasks of one srun step"
# The generic profile with the MPI plugin named in its launcher (the cluster's MpiDefault is none,
# as on sites where the profile must say it).
sed 's/^launcher: \[srun\]$/launcher: [srun, --mpi=pmix]/' "$SRC/sites/generic-cpu.yaml" >"$WORK/mpi-site.yaml"
grep -q -- '--mpi=pmix' "$WORK/mpi-site.yaml" || fail "the MPI site profile was not made (sites/generic-cpu.yaml's launcher changed?)"
cat >mpi.yaml <<'EOF'
title: Slurm MPI test deck
cases:
  - name: fit
    workload: regression
    variant: fused
    features: 4
    iterations: 300
    sizes: [2001]
    precision: float64
    spaces: [serial]
    policies: [host]
    repetitions: 2
  - name: rows
    workload: distance
    output: row-sum
    sizes: [301]
    spaces: [serial]
    policies: [host]
    repetitions: 2
EOF
out=$("$BIN" submit mpi.yaml --site "$WORK/mpi-site.yaml" --cpus 2 --ranks 2 --results "$WORK/results" --submit 2>&1)
mpi_job=$(sed -n 's/^submitted cpu job \([0-9]*\) .*/\1/p' <<<"$out")
if [ -z "$mpi_job" ]; then
  fail "submit --ranks 2: $out"
else
  wait_jobs "$mpi_job" >/dev/null
  sacct -X -o JobID,JobName%22,State,ExitCode,Elapsed -j "$mpi_job"
  json_check "$WORK/results/mpi-$mpi_job/results.json" \
    "r['status'] == 'complete' and r['provenance']['launcher'] == 'srun' and [x['rank'] for x in r['provenance']['ranks']] == [0, 1] and len(r['measurements']) == 2 and all(m['verification']['passed'] and m['ranks']['count'] == 2 for m in r['measurements']) and 'communicate' in r['measurements'][0]['seconds'] and 'communicate' not in r['measurements'][1]['seconds']" \
    "2-rank job: launcher srun, ranks 0 and 1, both measurements verified on both ranks, the fit's exchange recorded"
  # The cluster binds no task (TaskPlugin=task/none): pinned threads would put both ranks on CPU 0.
  if grep -q "wait for each other" "$WORK/results/miniapp-mpi-$mpi_job.out" 2>/dev/null; then
    fail "the 2-rank job's ranks share a CPU: $(grep -m1 'warning: ranks' "$WORK/results/miniapp-mpi-$mpi_job.out")"
  fi
fi
out=$(timeout 60 srun -n 2 --mpi=none "$BIN" mpi.yaml -q -o "$WORK/results/unconnected" 2>&1)
code=$?
if [ $code -eq 3 ] && grep -q "without an MPI plugin" <<<"$out" && [ ! -e "$WORK/results/unconnected/results.json" ]; then
  ok "2 tasks without an MPI plugin refused (exit 3)"
else
  fail "2 unconnected tasks: exit $code: $out"
fi
cat >mpi-slow.yaml <<'EOF'
title: Slurm MPI test deck, cancelled
cases:
  - name: long-fits
    workload: regression
    variant: fused
    features: 8
    iterations: 40000
    sizes: [1000, 4000, 16000, 64000]
    precision: float64
    spaces: [serial]
    policies: [host]
    repetitions: 2
EOF
out=$("$BIN" submit mpi-slow.yaml --site "$WORK/mpi-site.yaml" --cpus 2 --ranks 2 --results "$WORK/results" --submit 2>&1)
mpi_slow=$(sed -n 's/^submitted cpu job \([0-9]*\) .*/\1/p' <<<"$out")
mpi_slow_results=$WORK/results/mpi-slow-$mpi_slow/results.json
if [ -n "$mpi_slow" ]; then cancel_after "$mpi_slow" "$mpi_slow_results" 1 mpi-slow.yaml
else fail "no job id for the MPI job to cancel: $out"; fi
json_check "$mpi_slow_results" \
  "r['status'] == 'interrupted' and 1 <= r['finished_measurements'] < r['planned_measurements'] and len(r['measurements']) == r['finished_measurements'] and all(m['verification']['passed'] for m in r['measurements'])" \
  "cancelled 2-rank job: interrupted, finished measurements kept and verified"
pgrep -f "$WORK/mpi-slow.yaml" >/dev/null && fail "a rank of the cancelled MPI job outlived it"

section "7. every results file the jobs and merges wrote against the schema"
if out=$(/usr/bin/python3 "$SRC/tests/record/validate_results.py" "$WORK/results" 2>&1); then ok "$out"
else fail "results schema: $out"; fi

section "stopping"
[ $FAILURES -eq 0 ] || { echo "$FAILURES check(s) failed"; exit 1; }
echo "all Slurm checks passed"
exit 0
