#!/usr/bin/env bash
# Profiles the kernels behind issue 27's open targets with Nsight Compute (ncu), so a GPU sitting
# shows which bound each one hits (memory, compute, or latency and what its warps wait on), not
# only its time. One ncu run per row of scripts/lib/profile-targets.tsv: that row's benchmark
# alone, the kernels named there, a few launches, kernel replay with the clocks left as they are.
#
#   scripts/profile-kernels.sh BIN_DIR OUT_DIR [--targets FILE] [--only NAME,NAME] [--per-target SECONDS]
#
#   BIN_DIR        the build's bin directory (miniapp_benchmarks, built for CUDA)
#   OUT_DIR        written: NAME.ncu-rep (the report, for `ncu --import`), NAME.csv (its raw page:
#                  a column per metric, a row per launch, base units), NAME.log, profile-plan.txt
#                  (the targets, first) and profile.tsv (each target's status, seconds and why, as
#                  it finishes). scripts/ncu_profile.py reads them.
#   --targets      default: scripts/lib/profile-targets.tsv
#   --only         the targets to run, by name (default: all)
#   --per-target   seconds one target's ncu run may take (default 40); stopped, it is recorded
#   NCU            the ncu to run (default: ncu on PATH, else /usr/local/cuda/bin/ncu)
#
# Collected: the sections SpeedOfLight, LaunchStats, Occupancy and WarpStateStats (their metric
# names are the raw ones in NAME.csv) and the DRAM bytes read and written.
#
# Exit codes: 0 every target profiled; 1 a target failed, ran out of time or matched no kernel
# (profile.tsv says which); 2 bad arguments; 3 nothing to profile here: no ncu, or ncu cannot read
# the GPU's counters on this machine (its message is in profile.tsv and on stderr).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage_error() { echo "profile-kernels: $*" >&2; exit 2; }

# shellcheck source=lib/options.sh
. "$ROOT/scripts/lib/options.sh"
declare -A OPT=([targets]="$ROOT/scripts/lib/profile-targets.tsv" [only]="" [per-target]=40)
parse_options "$@"
[ ${#POSITIONAL[@]} -eq 2 ] || usage_error "usage: profile-kernels.sh BIN_DIR OUT_DIR [options] (try --help)"
BIN=${POSITIONAL[0]}; OUT=${POSITIONAL[1]}
TARGETS=${OPT[targets]}; ONLY=${OPT[only]}; PER_TARGET=${OPT[per-target]}
[ -x "$BIN/miniapp_benchmarks" ] || usage_error "no miniapp_benchmarks in '$BIN'"
[ -f "$TARGETS" ] || usage_error "no targets file '$TARGETS'"
[[ "$PER_TARGET" =~ ^[1-9][0-9]*$ ]] || usage_error "--per-target needs a number of seconds, not '$PER_TARGET'"

# The rows: name, benchmark filter, kernel regex, skip, count (comments and blank lines aside).
names=(); filters=(); kernels=(); skips=(); counts=()
while IFS=$'\t' read -r name filter kernel skip count _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ -n "$filter" && -n "$kernel" && "$skip" =~ ^[0-9]+$ && "$count" =~ ^[1-9][0-9]*$ ]] \
    || usage_error "$TARGETS: row '$name' needs a filter, a kernel regex, a skip and a count"
  if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
  names+=("$name"); filters+=("$filter"); kernels+=("$kernel"); skips+=("$skip"); counts+=("$count")
done <"$TARGETS"
if [ -n "$ONLY" ]; then
  IFS=, read -r -a wanted <<<"$ONLY"
  for w in "${wanted[@]}"; do [[ " ${names[*]} " == *" $w "* ]] || usage_error "no target '$w' in $TARGETS"; done
fi
[ ${#names[@]} -gt 0 ] || usage_error "no targets in $TARGETS"

mkdir -p "$OUT" || usage_error "cannot create '$OUT'"
# The plan first: a target with no row in profile.tsv when the run is stopped was not reached.
printf '%s\n' "${names[@]}" >"$OUT/profile-plan.txt"
STATUS="$OUT/profile.tsv"
printf 'target\tkernels\tstatus\tseconds\tdetail\n' >"$STATUS"
# record TARGET-INDEX STATUS SECONDS DETAIL
record() { printf '%s\t%s\t%s\t%s\t%s\n' "${names[$1]}" "${kernels[$1]}" "$2" "$3" "$4" >>"$STATUS"; }

NCU=${NCU:-$(command -v ncu || { [ -x /usr/local/cuda/bin/ncu ] && echo /usr/local/cuda/bin/ncu; } || true)}
if [ -z "$NCU" ]; then
  why="no ncu (Nsight Compute) on PATH or in /usr/local/cuda/bin"
  for i in "${!names[@]}"; do record "$i" not-run 0 "$why"; done
  echo "profile-kernels: $why" >&2
  exit 3
fi

# What ncu prints where it cannot read the counters (a driver that keeps them for admins, a
# sandbox without the profiler's access): nothing else would be measured either.
REFUSED='ERR_NVGPUCTRPERM|LibraryNotLoaded|Failed to initialize the profiler|Profiling is not supported'
SECTIONS=(--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats)
FAILED=0
for i in "${!names[@]}"; do
  name=${names[$i]}; t0=$SECONDS
  rm -f "$OUT/$name.ncu-rep" "$OUT/$name.csv"
  # Under ncu a benchmark runs one iteration (its launches wait on the profiler), which may launch
  # the kernel once: repeat the benchmark until skip + count launches come at least once a run
  # (a run of many launches, such as the blocked LU's, reaches them in its first; at most 8 runs).
  runs=$((skips[i] + counts[i])); [ "$runs" -le 8 ] || runs=8
  timeout --signal=TERM --kill-after=5 "$PER_TARGET" "$NCU" --clock-control none --kernel-name-base demangled \
    -k "regex:${kernels[$i]}" --launch-skip "${skips[$i]}" --launch-count "${counts[$i]}" \
    "${SECTIONS[@]}" --metrics dram__bytes_read.sum,dram__bytes_write.sum -f -o "$OUT/$name" \
    "$BIN/miniapp_benchmarks" "--benchmark_filter=${filters[$i]}" --benchmark_min_time=0.001 \
    --benchmark_repetitions="$runs" >"$OUT/$name.log" 2>&1
  rc=$?
  took=$((SECONDS - t0))
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    record "$i" timed-out "$took" "stopped after $PER_TARGET s"; FAILED=1; continue
  fi
  refusal=$(grep -m 1 -E "$REFUSED" "$OUT/$name.log")
  if [ -n "$refusal" ]; then
    record "$i" refused "$took" "ncu cannot read the counters here: $refusal"
    for j in "${!names[@]}"; do [ "$j" -gt "$i" ] && record "$j" not-run 0 "ncu cannot read the counters here"; done
    echo "profile-kernels: ncu cannot read the counters here: $refusal" >&2
    exit 3
  fi
  if grep -q 'No kernels were profiled' "$OUT/$name.log"; then
    record "$i" no-kernel "$took" "no launch of '${kernels[$i]}' in '${filters[$i]}' after skipping ${skips[$i]}"
    FAILED=1; continue
  fi
  if [ ! -f "$OUT/$name.ncu-rep" ]; then
    record "$i" failed "$took" "ncu exit $rc, no report; see $name.log"; FAILED=1; continue
  fi
  # The kernels by their demangled names (a lambda's names the function that launched it); an ncu
  # without that option exports its default names rather than nothing.
  if ! "$NCU" --import "$OUT/$name.ncu-rep" --csv --page raw --print-units base --print-kernel-base demangled \
         >"$OUT/$name.csv" 2>>"$OUT/$name.log" &&
     ! "$NCU" --import "$OUT/$name.ncu-rep" --csv --page raw --print-units base >"$OUT/$name.csv" 2>>"$OUT/$name.log"; then
    record "$i" failed "$took" "the report did not export to CSV; see $name.log"; FAILED=1; continue
  fi
  # The benchmark's own exit code: a failed run (an error, a wrong answer) is a failure here too.
  if [ "$rc" -ne 0 ]; then record "$i" failed "$took" "exit $rc (report kept); see $name.log"; FAILED=1; continue; fi
  record "$i" ok "$took" ""
done
exit "$FAILED"
