#!/usr/bin/env bash
# One command from a bundle to verified GPU results, in bounded time, on a node without network:
# builds with scripts/build-offline.sh (skipped when already built from the same bundle), then
# runs, each step under its own time limit (a step that runs out is stopped and recorded, the
# results of finished steps are kept, and the next step starts):
#   1. the unit tests on every space (ctest -L unit: unit.serial, unit.openmp, unit.cuda, unit.common;
#      unit.jobs only where its program is there: pack-prebuilt.sh leaves it out)
#   2. every deck in input/ but the quickstart and the advisor's sweep on the device space against
#      the host space (--spaces openmp,cuda; the decks' own mirror policies), and seed 000's deck
#      again at --sizes 100000000 (its comment's GPU size) for the copy table, and seed 001's one
#      large system at --sizes 4096 (blocked LU against the vendor's solver); then the advisor's
#      built-in sweep (input/advise.yaml: host threads 1, 2, 4, ... against the device) and its
#      answer, RESULTS/<gpu>-<date>/advise.txt
#   3. the GPU part of the benchmark suite (benchmarks whose name ends in the device space, and
#      the host copy benchmark for reference), one run per workload
#   4. benchmarks/peers.py on the host space: the seeds' NumPy forms beside the mini-app, same
#      sizes, precision and threads (skipped, with the reason, where NumPy does not import), and
#      the seeds' GPU libraries (CuPy, Numba, JAX, PyTorch where they import) beside the device space
#   5. input/kernel-times.yaml on the device space with --kernel-times: every kernel and vendor
#      call of each compute phase at the seed decks' GPU sizes, RESULTS/<gpu>-<date>/kernel-times/
#      (the host rehearsal runs its batched cases only)
#   6. scripts/profile-kernels.sh: Nsight Compute on the kernels of issue 27's open targets
#      (scripts/lib/profile-targets.tsv), which bound each hits, RESULTS/<gpu>-<date>/profile/
#      (skipped, with the reason, where there is no ncu or it cannot read the GPU's counters, and
#      in a host rehearsal)
# and writes RESULTS/<gpu>-<date>/ (raw: results.json per deck, benchmark JSON, ctest JUnit XML,
# logs, steps.tsv, run.env, nvidia-smi; the files over 64 KiB xz-compressed once the summary is
# written, by scripts/compact_results.py) and RESULTS/<gpu>-<date>.md (scripts/gpu_summary.py).
#
#   scripts/gpu-run.sh BUNDLE [--budget SECONDS] [--arch sm_XX] [--backend cuda|host]
#                             [--build-dir DIR] [--results DIR] [--decks D1.yaml,D2.yaml]
#                             [--benchmarks copy,matrix,distance,solver,regression]
#                             [--benchmark-forms all|open|workloads]
#                             [--kokkos VERSION] [--skip STEP,STEP] [--kernels-first]
#   scripts/gpu-run.sh --prebuilt [the same options but --arch]
#
#   BUNDLE      the bundle of scripts/bundle.sh (directory or .tar.xz)
#   --prebuilt  run the build already in the build directory, made by scripts/build-offline.sh on
#               another machine of the same CPU family (a login node with the CUDA toolkit, say: the
#               node that runs needs no compiler then), instead of building; no bundle is given.
#               Checked first: the build's backend and Kokkos, its libraries (ldd), and the CPU
#               features its host code was compiled for (-march=native there) against this node's;
#               a build this node cannot run fails the build step and nothing runs
#   --budget    wall-clock seconds for everything, build included (default 540: a 10-minute slot
#               with room to copy the results away); each step gets at most its share of what is
#               left, and the summary always gets written
#   --backend   cuda (default): device space cuda, host space openmp. host: a rehearsal without a
#               GPU, device space openmp against host space serial (what the tests here use)
#   --results   default: docs/results of this project
#   --decks     default: every input/*.yaml but quickstart.yaml, advise.yaml and kernel-times.yaml
#               (the two extra runs of step 2, seed 000 at 10^8 and seed 001 at 4096, only then)
#   --benchmarks  which parts of the benchmark suite (default: all five; "none" for none)
#   --benchmark-forms  which benchmarks of each part (scripts/lib/benchmark-forms.tsv; the copy
#               part always whole): all (default), the forms already decided too; open: the
#               workloads' own kernels, their bounds and the prepared forms a sitting is to decide;
#               workloads: the workloads' own kernels and their bounds only (a second Kokkos stack
#               whose table compares the kernels the workloads use)
#   --skip      steps not to run, recorded as skipped: unit-tests, decks, advise, benchmarks,
#               peers, kernel-times, profile (a second stack in the same sitting, say, whose code the
#               first run's unit tests and peers already covered)
#   --kernels-first  steps 3, 5 and 6 (benchmarks, kernel times, profile) right after the unit
#               tests, then the decks, the advisor and the peers: a short device slot that decides
#               kernel forms spends itself on the kernels, and what the budget leaves out is the decks
#   --kokkos    build and run on the bundle's second Kokkos release (bundle.sh --kokkos-tarball),
#               e.g. 4.6.01, instead of Debian's 3.4.01; the results directory's name ends in
#               -kokkos-VERSION and its build directory is kept beside the 3.4.01 one
#
# Exit codes: 0 every step ran and passed; 1 a step failed or ran out of time (steps.tsv and the
# summary say which); 2 bad arguments.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
START_SECONDS=$SECONDS
log() { printf '[gpu-run %3ds] %s\n' "$((SECONDS - START_SECONDS))" "$*" >&2; }
usage_error() { echo "gpu-run: $*" >&2; exit 2; }

BUNDLE=""; BUDGET=540; ARCH=""; BACKEND=cuda; BUILD=""; RESULTS="$ROOT/docs/results"; DECKS=""
BENCHMARKS="copy,matrix,distance,solver,regression"; BENCHMARK_FORMS=all; KOKKOS_RELEASE=""; PREBUILT=0; SKIP=""
KERNELS_FIRST=0
while [ $# -gt 0 ]; do
  case "$1" in
    --budget|--arch|--backend|--build-dir|--results|--decks|--benchmarks|--benchmark-forms|--kokkos|--skip)
      [ $# -ge 2 ] || usage_error "$1 needs a value"
      case "$1" in
        --budget) BUDGET=$2 ;; --arch) ARCH=$2 ;; --backend) BACKEND=$2 ;;
        --build-dir) BUILD=$2 ;; --results) RESULTS=$2 ;; --decks) DECKS=$2 ;;
        --benchmarks) BENCHMARKS=$2 ;; --benchmark-forms) BENCHMARK_FORMS=$2 ;;
        --kokkos) KOKKOS_RELEASE=$2 ;; --skip) SKIP=$2 ;;
      esac
      shift ;;
    --prebuilt) PREBUILT=1 ;;
    --kernels-first) KERNELS_FIRST=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    -*) usage_error "unknown option '$1' (try --help)" ;;
    *) [ -z "$BUNDLE" ] || usage_error "more than one bundle given"; BUNDLE=$1 ;;
  esac
  shift
done
if [ "$PREBUILT" = 1 ]; then
  [ -z "$BUNDLE" ] || usage_error "--prebuilt runs the build directory's build as it is: give no bundle"
  [ -z "$ARCH" ] || usage_error "--arch is for building; a prebuilt build has its architecture"
else
  [ -n "$BUNDLE" ] || usage_error "no bundle given (usage: gpu-run.sh BUNDLE [options], or --prebuilt; try --help)"
fi
[[ "$BUDGET" =~ ^[1-9][0-9]*$ ]] || usage_error "--budget needs a number of seconds, not '$BUDGET'"
case "$BACKEND" in
  cuda) DEVICE_SPACE=cuda; HOST_SPACE=openmp ;;
  host) DEVICE_SPACE=openmp; HOST_SPACE=serial; [ -z "$ARCH" ] || usage_error "--arch is for --backend cuda" ;;
  *) usage_error "unknown backend '$BACKEND' (cuda or host)" ;;
esac
# shellcheck source=lib/offline-build-dir.sh
. "$ROOT/scripts/lib/offline-build-dir.sh"
offline_build_dir "$ROOT" "$BACKEND" "$KOKKOS_RELEASE"
if [ "$PREBUILT" = 1 ]; then
  [ -f "$BUILD/offline-build.env" ] \
    || usage_error "--prebuilt: no build in $BUILD (no offline-build.env): build it with scripts/build-offline.sh, or name it with --build-dir"
  built() { sed -n "s/^$1=//p" "$BUILD/offline-build.env" | tr -d '"' | head -n 1; }
  [ "$(built BACKEND)" = "$BACKEND" ] || usage_error "--prebuilt: $BUILD holds a $(built BACKEND) build, not $BACKEND"
  # 4.6.01 names the release, 4.6.1 is what Kokkos' CMake says of itself.
  if [ -n "$KOKKOS_RELEASE" ] && [ "$(built KOKKOS_VERSION)" != "$(echo "$KOKKOS_RELEASE" | sed -E 's/\.0+([0-9])/.\1/g')" ]; then
    usage_error "--prebuilt: $BUILD was built with Kokkos $(built KOKKOS_VERSION), not $KOKKOS_RELEASE"
  fi
fi
if [ -n "$DECKS" ]; then IFS=, read -r -a deck_list <<<"$DECKS"
else mapfile -t deck_list < <(find "$ROOT/input" -maxdepth 1 -name '*.yaml' ! -name quickstart.yaml \
                                ! -name advise.yaml ! -name kernel-times.yaml | sort)
fi
for d in "${deck_list[@]}"; do [ -f "$d" ] || usage_error "no deck '$d'"; done
bench_parts=()
if [ "$BENCHMARKS" != none ]; then
  IFS=, read -r -a bench_parts <<<"$BENCHMARKS"
  for p in "${bench_parts[@]}"; do
    case "$p" in copy|matrix|distance|solver|regression) ;; *) usage_error "unknown benchmark part '$p'" ;; esac
  done
fi
case "$BENCHMARK_FORMS" in
  all) ;;
  workloads | open)
    sets=workload; [ "$BENCHMARK_FORMS" = open ] && sets="workload|open"
    mapfile -t form_families < <(awk -F'\t' -v sets="^($sets)\$" '!/^#/ && $2 ~ sets {print $1}' \
                                   "$ROOT/scripts/lib/benchmark-forms.tsv") ;;
  *) usage_error "unknown --benchmark-forms '$BENCHMARK_FORMS' (all, open or workloads)" ;;
esac
IFS=, read -r -a skip_steps <<<"$SKIP"
for p in "${skip_steps[@]}"; do
  case "$p" in
    unit-tests|decks|advise|benchmarks|peers|kernel-times|profile) ;;
    *) usage_error "unknown step '$p' for --skip (unit-tests, decks, advise, benchmarks, peers, kernel-times, profile)" ;;
  esac
done
SKIP=${SKIP//decks/deck}  # the deck steps are named deck:STEM

# The results directory: <gpu>-<date>, lower case, a number appended if it exists already.
if [ "$BACKEND" = cuda ] && command -v nvidia-smi >/dev/null; then
  device_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
fi
device_name=${device_name:-$( [ "$BACKEND" = cuda ] && echo unknown-gpu || echo "host-$(hostname -s)")}
slug=$(printf '%s' "$device_name" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-+|-+$//g')
name="$slug-$(date -u +%Y-%m-%d)${KOKKOS_RELEASE:+-kokkos-$KOKKOS_RELEASE}"
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
n=1; base=$name
while [ -e "$RESULTS/$name" ] || [ -e "$RESULTS/$name.md" ]; do n=$((n + 1)); name="$base-$n"; done
OUT="$RESULTS/$name"
mkdir -p "$OUT/decks" "$OUT/benchmarks" "$OUT/logs"
log "results: $OUT (summary: $OUT.md), budget $BUDGET s"

STEPS="$OUT/steps.tsv"
printf 'step\tstatus\tseconds\texit_code\tdetail\n' >"$STEPS"
FAILED=0
remaining() { echo $((BUDGET - (SECONDS - START_SECONDS))); }
SUMMARY_RESERVE=15

# skipped_by_option STEP: whether --skip names STEP (its part before a colon: benchmarks:solver
# is benchmarks). record_skipped STEP WHY: STEP recorded in steps.tsv as skipped for WHY.
skipped_by_option() { [[ ",$SKIP," == *",${1%%:*},"* ]]; }
record_skipped() { printf '%s\tskipped\t0\t\t%s\n' "$1" "$2" >>"$STEPS"; }

# run_step NAME CAP LOG COMMAND...: runs the command under min(CAP, what is left) seconds
# (SIGTERM, then SIGKILL 10 s later) and records it. Returns the command's exit code. With
# SKIP_RC set, that exit code records the step as skipped, the log's last line saying why.
run_step() {
  local step=$1 cap=$2 logfile=$3; shift 3
  if skipped_by_option "$step"; then
    record_skipped "$step" "--skip ${step%%:*}"
    log "$step: skipped (--skip)"
    return 0
  fi
  local left=$(( $(remaining) - SUMMARY_RESERVE ))
  if [ "$left" -lt 5 ]; then
    printf '%s\tnot-run\t0\t\tno time left in the budget\n' "$step" >>"$STEPS"
    log "$step: not run (no time left)"
    FAILED=1
    return 124
  fi
  [ "$cap" -gt "$left" ] && cap=$left
  log "$step (at most $cap s)"
  local t0=$SECONDS rc
  timeout --signal=TERM --kill-after=10 "$cap" "$@" >"$logfile" 2>&1
  rc=$?
  local took=$((SECONDS - t0)) status=ok detail=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status=timed-out; detail="stopped after $cap s"; FAILED=1
  elif [ -n "${SKIP_RC:-}" ] && [ "$rc" -eq "$SKIP_RC" ]; then status=skipped; detail=$(tail -n 1 "$logfile" | tr '\t' ' ')
  elif [ "$rc" -ne 0 ]; then status=failed; detail="exit $rc; see logs/$(basename "$logfile")"; FAILED=1
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$step" "$status" "$took" "$rc" "$detail" >>"$STEPS"
  log "$step: $status ($took s)"
  return "$rc"
}

# 0. The machine.
{
  echo "name=$name"
  echo "backend=$BACKEND"
  echo "device_space=$DEVICE_SPACE"
  echo "host_space=$HOST_SPACE"
  echo "device_name=$device_name"
  echo "budget_seconds=$BUDGET"
  echo "benchmark_forms=$BENCHMARK_FORMS"
  echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "hostname=$(hostname)"
  echo "cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "cpus=$(nproc)"
  if [ "$BACKEND" = cuda ] && command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=driver_version,memory.total,compute_cap,pci.bus_id --format=csv,noheader 2>/dev/null \
      | head -n 1 | awk -F', ' '{print "driver=" $1; print "gpu_memory=" $2; print "compute_capability=" $3; print "pci_bus_id=" $4}'
  fi
  nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
  [ -n "$nvcc" ] && echo "nvcc=$("$nvcc" --version | sed -nE 's/.*release ([0-9.]+), (V[0-9.]+).*/\1 (\2)/p')"
} >"$OUT/run.env"
[ "$BACKEND" = cuda ] && { nvidia-smi -q >"$OUT/nvidia-smi-before.txt" 2>&1 || true; }

# The steps after the build, one function each (called in the order chosen at the end).

# 2. Unit tests on every compiled space (JUnit XML where this CMake writes it: 3.21 and later).
unit_tests_step() {
  junit=(); cmake_minor=$(cmake --version | sed -nE '1s/.* ([0-9]+)\.([0-9]+).*/\1 \2/p')
  read -r cm_major cm_minor <<<"$cmake_minor"
  if [ "${cm_major:-0}" -gt 3 ] || { [ "${cm_major:-0}" -eq 3 ] && [ "${cm_minor:-0}" -ge 21 ]; }; then
    junit=(--output-junit "$OUT/unit-tests.xml")
  fi
  # The bundle cannot carry python3-jsonschema: where this node's Debian-path Python lacks it, the
  # tests that validate results against the schema say they skipped that check.
  if ! /usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1; then
    export MINIAPP_SCHEMA_CHECK=optional
    log "no jsonschema module for /usr/bin/python3: the unit tests skip the results-schema checks"
  fi
  # A packed build (pack-prebuilt.sh) has no miniapp_jobs_tests: unit.jobs tests host-only code
  # (the job subcommands), so it is left out and recorded as such rather than failed as not found.
  unit_exclude=()
  if [ "$PREBUILT" = 1 ] && [ ! -x "$BUILD/project/tests/miniapp_jobs_tests" ] && ! skipped_by_option unit-tests; then
    unit_exclude=(-E '^unit\.jobs$')
    why="no miniapp_jobs_tests in this prebuilt build (pack-prebuilt.sh leaves out the host-only job subcommands' tests)"
    record_skipped unit-tests:jobs "$why"
    log "unit-tests: unit.jobs left out (no miniapp_jobs_tests in this prebuilt build)"
  fi
  run_step unit-tests 150 "$OUT/logs/unit-tests.log" \
    bash -c 'cd "$1" && shift && exec ctest "$@"' ctest "$BUILD/project" \
    -L unit "${unit_exclude[@]}" --output-on-failure --timeout 120 "${junit[@]}"
  local rc=$?
  # A test that crashed printed its stack as the binary's addresses: named here, while this
  # machine still has the binaries (logs/unit-tests-crashes.log).
  if grep -q '^crashed: ' "$OUT/logs/unit-tests.log" 2>/dev/null; then
    "$ROOT/scripts/lib/symbolize-crashes.sh" "$OUT/logs/unit-tests.log" >"$OUT/logs/unit-tests-crashes.log" 2>&1
    log "unit-tests: crashes, their stacks named in logs/unit-tests-crashes.log"
  fi
  return "$rc"
}

# 3. The decks, device space against host space; seed 000 once more at the GPU size.
decks_step() {
  for deck in "${deck_list[@]}"; do
    stem=$(basename "$deck" .yaml)
    run_step "deck:$stem" 75 "$OUT/logs/$stem.log" \
      "$BIN/miniapp" "$deck" --spaces "$HOST_SPACE,$DEVICE_SPACE" -o "$OUT/decks/$stem" -q
  done
  seed000="$ROOT/input/matrix-seed000-power.yaml"
  if [ "$BACKEND" = cuda ] && [ -z "$DECKS" ] && [ -f "$seed000" ]; then
    run_step "deck:matrix-seed000-power-1e8" 90 "$OUT/logs/matrix-seed000-power-1e8.log" \
      "$BIN/miniapp" "$seed000" --spaces "$HOST_SPACE,$DEVICE_SPACE" --sizes 100000000 \
      -o "$OUT/decks/matrix-seed000-power-1e8" -q
  fi
  # One dense system at n = 4096: the mini-app's blocked LU against the vendor's solver (cuSOLVER).
  seed001="$ROOT/input/solver-seed001-one-large-system.yaml"
  if [ "$BACKEND" = cuda ] && [ -z "$DECKS" ] && [ -f "$seed001" ]; then
    run_step "deck:solver-seed001-one-large-system-4096" 90 "$OUT/logs/solver-seed001-one-large-system-4096.log" \
      "$BIN/miniapp" "$seed001" --spaces "$HOST_SPACE,$DEVICE_SPACE" --sizes 4096 \
      -o "$OUT/decks/solver-seed001-one-large-system-4096" -q
  fi
}

# The advisor's sweep, device against host threads 1, 2, 4, ..., and its answer (issue: how many
# host cores match one device, measured).
advise_step() {
  if [ -z "$DECKS" ] && [ -f "$ROOT/input/advise.yaml" ]; then
    run_step advise 150 "$OUT/logs/advise.log" bash -c '"$1" "$2" --spaces "$3" -o "$4" -q && "$1" advise "$4" >"$5"' \
      advise "$BIN/miniapp" "$ROOT/input/advise.yaml" "$HOST_SPACE,$DEVICE_SPACE" "$OUT/advise" "$OUT/advise.txt"
  fi
}

# 4. Benchmarks of the device space, one run per workload so a timeout costs one file.
benchmarks_step() {
  for part in "${bench_parts[@]}"; do
    filter="^$part.*/$DEVICE_SPACE/"
    # --benchmark-forms workloads or open: the part's families of benchmark-forms.tsv only
    if [ "$BENCHMARK_FORMS" != all ]; then
      families=$(printf '%s\n' "${form_families[@]}" | grep "^$part-" | paste -sd'|')
      # a part with none of the set's families has nothing to run (Google Benchmark would fail it
      # for a filter that matches nothing); the copy part's filter is its own (below)
      if [ -z "$families" ] && [ "$part" != copy ]; then
        record_skipped "benchmarks:$part" "no $part family of --benchmark-forms $BENCHMARK_FORMS"
        log "benchmarks:$part: skipped (no $part family in --benchmark-forms $BENCHMARK_FORMS)"
        continue
      fi
      filter="^($families)/.*/$DEVICE_SPACE/"
    fi
    # copy: the bounds, on both spaces: the copy, every fill (the fastest is the distance's bound),
    # and what one launch costs before any work
    [ "$part" = copy ] &&
      filter="^(copy|fill|fill-flat|fill-flat-k[0-9]+|fill-packs-k[0-9]+|fill-deep-copy)/.*/($DEVICE_SPACE|$HOST_SPACE)/|^launch-(range|team)/($DEVICE_SPACE|$HOST_SPACE)/"
    # matrix: gemm-tiled's two device forms at 4096 too (a few seconds each, 3 repetitions);
    # solver: dense-blocked's leaf forms and dense-vendor at 4096 (37 s on the H200 on 2026-11-29
    # with eight of them; the resident forms and the two at 4096 since); distance: 37 entries took
    # 41 s on 2026-12-01, eight more since. A part stopped at its limit keeps the benchmarks it
    # finished (Google Benchmark flushes its file after each; the summary closes the file and says so).
    # A part whose program dies in a benchmark (a prepared form faulting the GPU on its first run)
    # runs the benchmarks after it again (benchmark_part.py: <part>-resumed-N.json), and the one it
    # died in is an error row of the summary (<part>-crashed.json); the step is then failed. On a
    # GPU a run that finishes no benchmark in 30 s (each takes a few: one that hangs) is aborted
    # and taken as such a death; a host rehearsal's slower benchmarks run without that limit.
    limit=60
    case "$part" in matrix | solver) limit=120 ;; distance) limit=90 ;; esac
    stall=(); [ "$BACKEND" = cuda ] && stall=(--stall 30)
    log "benchmarks:$part: --benchmark_filter=$filter"
    run_step "benchmarks:$part" "$limit" "$OUT/logs/benchmarks-$part.log" \
      python3 "$ROOT/scripts/benchmark_part.py" "${stall[@]}" "$OUT/benchmarks/$part.json" \
      "$BIN/miniapp_benchmarks" "--benchmark_filter=$filter" --benchmark_min_time=0.1 \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
  done
}

# 5. The peers: the seeds' NumPy forms on the host space beside the mini-app, same run.
peers_step() {
  # (a step in --skip goes to run_step, which records it as skipped for that reason)
  if ! skipped_by_option peers && ! python3 -c 'import numpy' >/dev/null 2>&1; then
    record_skipped peers "NumPy does not import in $(command -v python3)"
  else
    peer_size=(--rounds 3); [ "$BACKEND" = host ] && peer_size=(--quick)  # a rehearsal: small sizes
    # The rounds that fit what is left: no round is started that would end past the step's limit
    # (a short slot got two of three rounds into 55 s and lost them all when the step was stopped);
    # the files are written after each round as well.
    local limit=240 cap left=$(( $(remaining) - SUMMARY_RESERVE ))
    cap=$(( left < limit ? left : limit ))  # what run_step will give the step
    [ "$cap" -gt 15 ] && peer_size+=(--deadline $((cap - 10)))
    # --gpu-peers: CuPy, Numba, JAX and PyTorch where they import, beside the device space.
    run_step peers "$limit" "$OUT/logs/peers.log" python3 "$ROOT/benchmarks/peers.py" --miniapp "$BIN/miniapp" \
      --space "$HOST_SPACE" --threads "$OMP_NUM_THREADS" "${peer_size[@]}" --gpu-peers --gpu-space "$DEVICE_SPACE" \
      --markdown "$OUT/peers.md" --json "$OUT/peers.json"
  fi
}

# 6. Where each compute phase's time goes, kernel by kernel (fenced: a profile, not a benchmark).
kernel_times_step() {
  if [ -z "$DECKS" ] && [ -f "$ROOT/input/kernel-times.yaml" ]; then
    cases=(); [ "$BACKEND" = host ] && cases=(--case 'batched-*')  # a rehearsal: the small cases
    run_step kernel-times 120 "$OUT/logs/kernel-times.log" \
      "$BIN/miniapp" "$ROOT/input/kernel-times.yaml" --kernel-times --spaces "$DEVICE_SPACE" "${cases[@]}" \
      -o "$OUT/kernel-times"
  fi
}

# 7. Which bound the open targets' kernels hit (Nsight Compute: counters, not times).
profile_step() {
  if [ "$BACKEND" != cuda ] && ! skipped_by_option profile; then
    record_skipped profile "no GPU to profile in a host rehearsal"
  else
    SKIP_RC=3 run_step profile 150 "$OUT/logs/profile.log" "$ROOT/scripts/profile-kernels.sh" "$BIN" "$OUT/profile"
  fi
}

# 1. The build (Kokkos and the project; quick when already built from this bundle).
arch_args=(); [ -n "$ARCH" ] && arch_args=(--arch "$ARCH")
[ -n "$KOKKOS_RELEASE" ] && arch_args+=(--kokkos "$KOKKOS_RELEASE")
build_command=("$ROOT/scripts/build-offline.sh" "$BUNDLE" --backend "$BACKEND" "${arch_args[@]}" --build-dir "$BUILD")
[ "$PREBUILT" = 1 ] && build_command=("$ROOT/scripts/lib/check-prebuilt.sh" "$BUILD")
if ! run_step build 420 "$OUT/logs/build.log" "${build_command[@]}"; then
  log "the build failed: nothing to run (see $OUT/logs/build.log)"
else
  cp "$BUILD/offline-build.env" "$OUT/build.env"
  BIN="$BUILD/project/bin"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
  echo "omp=OMP_NUM_THREADS=$OMP_NUM_THREADS OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=$OMP_PLACES" >>"$OUT/run.env"

  # The steps in their order: with --kernels-first the benchmarks, the kernel times and the profile
  # come before the decks and the advisor, so a short slot spends itself on the kernels.
  unit_tests_step
  if [ "$KERNELS_FIRST" = 1 ]; then
    benchmarks_step; kernel_times_step; profile_step; decks_step; advise_step; peers_step
  else
    decks_step; advise_step; benchmarks_step; peers_step; kernel_times_step; profile_step
  fi
fi

[ "$BACKEND" = cuda ] && { nvidia-smi -q >"$OUT/nvidia-smi-after.txt" 2>&1 || true; }
echo "finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$OUT/run.env"
if python3 "$ROOT/scripts/gpu_summary.py" "$OUT" --output "$OUT.md" >"$OUT/logs/summary.log" 2>&1; then
  log "summary: $OUT.md"
  # The raw files over 64 KiB as FILE.xz (the project's readers open either; `xz -dk` restores).
  python3 "$ROOT/scripts/compact_results.py" "$OUT" >>"$OUT/logs/summary.log" 2>&1 ||
    log "compacting the raw files failed: $(tail -n 2 "$OUT/logs/summary.log")"
else
  log "writing the summary failed: $(tail -n 5 "$OUT/logs/summary.log")"
  FAILED=1
fi
log "done in $((SECONDS - START_SECONDS)) s: $OUT"
exit "$FAILED"
