#!/usr/bin/env bash
# scripts/bundle.sh --kokkos-tarball/--kernels-tarball and build-offline.sh/gpu-run.sh --kokkos:
# what is refused, with exit code 2 and a message naming the problem, before anything is
# downloaded or built. The tarballs here are stand-ins: a release tarball is never in the project.
#   test_bundle_arguments.sh SOURCE_DIR
set -uo pipefail
SRC=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../common/expect.sh
. "$SRC/tests/common/expect.sh"
echo "not a release" >"$tmp/kokkos-4.6.01.tar.gz"
echo "not a release" >"$tmp/kokkos-kernels-4.6.01.tar.gz"
echo "not a release" >"$tmp/kokkos-kernels-4.5.01.tar.gz"
echo "not a release" >"$tmp/kokkos-9.9.99.tar.gz"
echo "not a release" >"$tmp/kokkos-kernels-9.9.99.tar.gz"
echo "not a release" >"$tmp/kokkos.tgz"
B="$SRC/scripts/bundle.sh"
expect 2 "go together" "$B" --kokkos-tarball "$tmp/kokkos-4.6.01.tar.gz" "$tmp/out"
expect 2 "go together" "$B" --kernels-tarball "$tmp/kokkos-kernels-4.6.01.tar.gz" "$tmp/out"
expect 2 "no file" "$B" --kokkos-tarball "$tmp/missing.tar.gz" --kernels-tarball "$tmp/kokkos-kernels-4.6.01.tar.gz"
expect 2 "named kokkos-X.Y.ZZ.tar.gz" "$B" --kokkos-tarball "$tmp/kokkos.tgz" --kernels-tarball "$tmp/kokkos-kernels-4.6.01.tar.gz"
expect 2 "not one release pair" "$B" --kokkos-tarball "$tmp/kokkos-4.6.01.tar.gz" --kernels-tarball "$tmp/kokkos-kernels-4.5.01.tar.gz"
expect 2 "is not a release scripts/lib/kokkos-releases.tsv knows" "$B" --kokkos-tarball "$tmp/kokkos-9.9.99.tar.gz" --kernels-tarball "$tmp/kokkos-kernels-9.9.99.tar.gz"
expect 2 "does not match the published sha256 of kokkos-4.6.01.tar.gz (b9d70e46" "$B" --kokkos-tarball "$tmp/kokkos-4.6.01.tar.gz" --kernels-tarball "$tmp/kokkos-kernels-4.6.01.tar.gz"
expect 2 "wants a release version" "$SRC/scripts/build-offline.sh" "$tmp" --backend host --kokkos latest
expect 2 "--build-type is Release or Check" "$SRC/scripts/build-offline.sh" "$tmp" --backend host --build-type Debug
expect 2 "--host-arch no-such-cpu: " "$SRC/scripts/build-offline.sh" "$tmp" --backend host --host-arch no-such-cpu
expect 2 "--host-arch needs a CPU type" "$SRC/scripts/build-offline.sh" "$tmp" --backend host --host-arch '-O3 x'
expect 2 "wants a release version" "$SRC/scripts/gpu-run.sh" "$tmp" --backend host --kokkos 4.6
# gpu-run.sh --prebuilt: refused without a build of the asked-for kind; check-prebuilt.sh refuses a
# build this CPU lacks features for, or whose programs miss libraries, and passes a runnable one.
G="$SRC/scripts/gpu-run.sh"; C="$SRC/scripts/lib/check-prebuilt.sh"
mkdir -p "$tmp/empty" "$tmp/fake/project/bin"
expect 2 "give no bundle" "$G" "$tmp" --prebuilt --backend host
expect 2 "no build in $tmp/empty" "$G" --prebuilt --backend host --build-dir "$tmp/empty"
printf 'BACKEND=cuda\nKOKKOS_VERSION=4.6.1\nPROJECT_BUILD=%s\nBUILD_CPU_ISA="sse2"\n' "$tmp/fake/project" >"$tmp/fake/offline-build.env"
expect 2 "holds a cuda build, not host" "$G" --prebuilt --backend host --build-dir "$tmp/fake"
expect 2 "built with Kokkos 4.6.1, not 4.7.01" "$G" --prebuilt --kokkos 4.7.01 --build-dir "$tmp/fake" --results "$tmp/r"
expect 1 "no $tmp/fake/project/bin/miniapp" "$C" "$tmp/fake"
cp "$(type -P true)" "$tmp/fake/project/bin/miniapp"
expect 0 "ok: miniapp finds its libraries" "$C" "$tmp/fake"
sed -i 's/^BUILD_CPU_ISA=.*/BUILD_CPU_ISA="sse2 no_such_feature"/' "$tmp/fake/offline-build.env"
expect 1 "CPU features this node lacks: no_such_feature" "$C" "$tmp/fake"
sed -i 's/^BUILD_CPU_ISA=.*/BUILD_CPU_ISA="sse2"/' "$tmp/fake/offline-build.env"
printf '#!/bin/sh\n' >"$tmp/fake/project/bin/miniapp"; chmod +x "$tmp/fake/project/bin/miniapp"
expect 1 "ldd $tmp/fake/project/bin/miniapp failed" "$C" "$tmp/fake"
# gpu-run.sh --skip: an unknown step is refused; the steps named are recorded as skipped, the
# others run (a fake host build whose programs are `true`).
expect 2 "unknown step 'bogus' for --skip" "$G" "$tmp" --backend host --skip bogus
mkdir -p "$tmp/hostfake/project/bin"
cp "$(type -P true)" "$tmp/hostfake/project/bin/miniapp"; cp "$(type -P true)" "$tmp/hostfake/project/bin/miniapp_benchmarks"
printf 'BACKEND=host\nKOKKOS_VERSION=3.4.1\nPROJECT_BUILD=%s\nBUILD_CPU_ISA="sse2"\n' "$tmp/hostfake/project" >"$tmp/hostfake/offline-build.env"
expect 0 "unit-tests: skipped (--skip)" "$G" --prebuilt --backend host --build-dir "$tmp/hostfake" --results "$tmp/hr" \
  --skip unit-tests,peers,profile --decks "$SRC/input/quickstart.yaml" --benchmarks solver
steps=$(cat "$tmp"/hr/*/steps.tsv 2>/dev/null)
if [[ "$steps" == *$'unit-tests\tskipped\t0\t\t--skip unit-tests'* ]] && [[ "$steps" == *$'deck:quickstart\tok'* ]] &&
   [[ "$steps" == *$'benchmarks:solver\tok'* ]] && [[ "$steps" == *$'peers\tskipped\t0\t\t--skip peers'* ]] &&
   [[ "$steps" == *$'profile\tskipped\t0\t\t--skip profile'* ]]; then
  echo "ok: gpu-run.sh --skip records the skipped steps and runs the rest"
else echo "FAIL: gpu-run.sh --skip unit-tests,peers,profile: steps.tsv reads: $steps"; failures=$((failures + 1)); fi
# gpu-run.sh's benchmark part whose program dies in a benchmark (a fault on a GPU): the benchmark
# after it runs again, the step fails with the program's 134, and the summary names the one it died
# in (a stand-in program: two benchmarks, a run dies by SIGABRT unless it names the second alone).
mkdir -p "$tmp/crashfake/project/bin"; cp "$(type -P true)" "$tmp/crashfake/project/bin/miniapp"
cat >"$tmp/standin.c" <<'STANDIN'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  const char *a = "solver-a/float64/openmp/1/manual_time", *b = "solver-b/float64/openmp/1/manual_time";
  const char *out = NULL, *filter = "";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--benchmark_list_tests=true")) return printf("%s\n%s\n", a, b) < 0;
    if (!strncmp(argv[i], "--benchmark_out=", 16)) out = argv[i] + 16;
    if (!strncmp(argv[i], "--benchmark_filter=", 19)) filter = argv[i] + 19;
  }
  FILE* f = fopen(out, "w");
  if (!f) return 1;
  fprintf(f, "{\n  \"context\": {},\n  \"benchmarks\": [\n");
  char only_b[128];
  snprintf(only_b, sizeof only_b, "^(%s)$", b);
  if (strcmp(filter, only_b)) { fflush(f); abort(); }
  fprintf(f, "    {\"run_name\": \"%s\", \"run_type\": \"aggregate\", \"aggregate_name\": \"median\", "
             "\"real_time\": 1, \"time_unit\": \"ms\"}\n  ]\n}\n", b);
  return fclose(f) != 0;
}
STANDIN
cc -o "$tmp/crashfake/project/bin/miniapp_benchmarks" "$tmp/standin.c"
sed "s#$tmp/hostfake#$tmp/crashfake#" "$tmp/hostfake/offline-build.env" >"$tmp/crashfake/offline-build.env"
expect 1 "benchmarks:solver: failed" "$G" --prebuilt --backend host --build-dir "$tmp/crashfake" --results "$tmp/cr" \
  --skip unit-tests,decks,advise,peers,kernel-times,profile --benchmarks solver
if grep -q $'^benchmarks:solver\tfailed\t[0-9]*\t134\t' "$tmp"/cr/*/steps.tsv &&
   grep -q '"run_name": "solver-b/float64/openmp/1/manual_time"' "$tmp"/cr/*/benchmarks/solver-resumed-1.json &&
   grep -q '| solver-a/float64/openmp/1/manual_time | error: miniapp_benchmarks was killed by SIGABRT' "$tmp"/cr/*.md; then
  echo "ok: gpu-run.sh runs a part's benchmarks after the one its program died in, and names that one"
else echo "FAIL: a part whose program died: $(cat "$tmp"/cr/*/steps.tsv; ls "$tmp"/cr/*/benchmarks)"; failures=$((failures + 1)); fi
# gpu-run.sh --kernels-first: the benchmarks, the kernel times and the profile step right after
# the unit tests, then every deck (a short budget then leaves out decks, not kernels); without it,
# the decks come first.
order_args=(--prebuilt --backend host --build-dir "$tmp/hostfake" --skip unit-tests,peers,advise --benchmarks solver)
step_order() { cut -f1 "$1"/*/steps.tsv | grep -E '^(deck:|benchmarks:|kernel-times|profile)' | tr '\n' ' '; }
expect 0 "kernel-times" "$G" "${order_args[@]}" --kernels-first --results "$tmp/kf"
expect 0 "kernel-times" "$G" "${order_args[@]}" --results "$tmp/dk"
kf=$(step_order "$tmp/kf"); dk=$(step_order "$tmp/dk")
decks=$(find "$SRC/input" -maxdepth 1 -name '*.yaml' ! -name quickstart.yaml ! -name advise.yaml ! -name kernel-times.yaml | wc -l)
if [[ "$kf" == "benchmarks:solver kernel-times profile deck:"* ]] && [[ "$dk" == "deck:"*" benchmarks:solver kernel-times profile " ]] &&
   [ "$(grep -o 'deck:' <<<"$kf" | wc -l)" -eq "$decks" ] && [ "$(grep -o 'deck:' <<<"$dk" | wc -l)" -eq "$decks" ]; then
  echo "ok: gpu-run.sh --kernels-first runs the benchmarks, kernel times and profile before the decks"
else echo "FAIL: gpu-run.sh --kernels-first: order $kf; default order $dk"; failures=$((failures + 1)); fi
# gpu-run.sh --benchmark-forms: an unknown value is refused; `workloads` gives each part the
# filter of its workload families in scripts/lib/benchmark-forms.tsv, `open` those and its open
# ones, `all` the whole part; the copy part is whole in each (the filters as gpu-run.sh's log
# names them; the fake build's programs are `true`).
expect 2 "unknown --benchmark-forms 'some' (all, open or workloads)" "$G" --prebuilt --backend host \
  --build-dir "$tmp/hostfake" --benchmark-forms some
forms_args=(--prebuilt --backend host --build-dir "$tmp/hostfake" --skip unit-tests,decks,advise,peers,kernel-times,profile
            --benchmarks copy,matrix,regression)
filters() { "$G" "${forms_args[@]}" "$@" 2>&1 | sed -n 's/.*benchmarks:[a-z]*: --benchmark_filter=//p'; }
got_workloads=$(filters --benchmark-forms workloads --results "$tmp/wf"); got_all=$(filters --results "$tmp/af")
got_open=$(filters --benchmark-forms open --results "$tmp/of")
copy_filter="^(copy|fill|fill-flat|fill-flat-k[0-9]+|fill-packs-k[0-9]+|fill-deep-copy)/.*/(openmp|serial)/|^launch-(range|team)/(openmp|serial)/"
matrix_workload="matrix-elementwise-multiply|matrix-elementwise-power|matrix-gemm-naive|matrix-gemm-tiled|matrix-gemm-kokkos-kernels"
regression_workload="regression-blas|regression-fused|regression-stream-read"
want_workloads="$copy_filter
^($matrix_workload)/.*/openmp/
^($regression_workload)/.*/openmp/"
want_all="$copy_filter
^matrix.*/openmp/
^regression.*/openmp/"
if [ "$got_workloads" = "$want_workloads" ] && [ "$got_all" = "$want_all" ] &&
   [[ "$(sed -n 2p <<<"$got_open")" == "^($matrix_workload|matrix-elementwise-power-k4|matrix-elementwise-power-exp2-k4|"*")/.*/openmp/" ]] &&
   [[ "$(sed -n 3p <<<"$got_open")" == "^($regression_workload|regression-sums-registers-lanes4|"*")/.*/openmp/" ]] &&
   [ "$(head -n 1 <<<"$got_open")" = "$copy_filter" ] &&
   grep -q '^benchmark_forms=workloads$' "$tmp"/wf/*/run.env && grep -q '^benchmark_forms=all$' "$tmp"/af/*/run.env &&
   grep -q "the workloads' own kernels and their bounds only" "$tmp"/wf/*.md &&
   grep -q "the prepared forms still open" "$tmp"/of/*.md && ! grep -q "own kernels" "$tmp"/af/*.md; then
  echo "ok: gpu-run.sh --benchmark-forms workloads / open run each part's families of benchmark-forms.tsv, and say so"
else echo "FAIL: gpu-run.sh --benchmark-forms: filters with workloads: $got_workloads; with open: $got_open; with all: $got_all"
  failures=$((failures + 1)); fi
# A part with none of the set's families is recorded as skipped, with the reason, and not run
# with a filter that matches nothing (which Google Benchmark fails): a copy of the scripts whose
# table has no distance rows.
mkdir -p "$tmp/formsroot"
cp -r "$SRC/scripts" "$SRC/input" "$tmp/formsroot/"
grep -v '^distance-' "$SRC/scripts/lib/benchmark-forms.tsv" >"$tmp/formsroot/scripts/lib/benchmark-forms.tsv"
empty_out=$("$tmp/formsroot/scripts/gpu-run.sh" --prebuilt --backend host --build-dir "$tmp/hostfake" \
  --skip unit-tests,decks,advise,peers,kernel-times,profile --benchmarks copy,distance,regression \
  --benchmark-forms workloads --results "$tmp/ef" 2>&1)
if grep -q $'^benchmarks:distance\tskipped\t0\t\tno distance family of --benchmark-forms workloads$' "$tmp"/ef/*/steps.tsv &&
   ! grep -q 'benchmarks:distance: --benchmark_filter' <<<"$empty_out" &&
   grep -q "benchmarks:regression: --benchmark_filter=^($regression_workload)/" <<<"$empty_out" &&
   grep -q $'^benchmarks:copy\tok\t' "$tmp"/ef/*/steps.tsv; then
  echo "ok: gpu-run.sh --benchmark-forms skips a part with none of the set's families, and says why"
else echo "FAIL: gpu-run.sh --benchmark-forms, a part with no family: $(cat "$tmp"/ef/*/steps.tsv 2>&1); $empty_out"
  failures=$((failures + 1)); fi
# gpu-run.sh --prebuilt without miniapp_jobs_tests (pack-prebuilt.sh leaves it out): unit.jobs is
# left out of the unit step and recorded as skipped; with the program there, it runs.
printf 'add_test(unit.jobs "%s")\nset_tests_properties(unit.jobs PROPERTIES LABELS "unit")\n' \
  "$tmp/hostfake/project/tests/miniapp_jobs_tests" >"$tmp/hostfake/project/CTestTestfile.cmake"
printf 'add_test(unit.other "%s")\nset_tests_properties(unit.other PROPERTIES LABELS "unit")\n' \
  "$(type -P true)" >>"$tmp/hostfake/project/CTestTestfile.cmake"
only_units=(--prebuilt --backend host --build-dir "$tmp/hostfake" --skip peers,advise,kernel-times
            --decks "$SRC/input/quickstart.yaml" --benchmarks none)
expect 0 "unit.jobs left out (no miniapp_jobs_tests in this prebuilt build)" "$G" "${only_units[@]}" --results "$tmp/jr"
steps=$(cat "$tmp"/jr/*/steps.tsv 2>/dev/null); unit_log=$(cat "$tmp"/jr/*/logs/unit-tests.log 2>/dev/null)
if [[ "$steps" == *$'unit-tests:jobs\tskipped\t0\t\tno miniapp_jobs_tests'* ]] && [[ "$steps" == *$'unit-tests\tok'* ]] &&
   [[ "$unit_log" == *"unit.other"*"Passed"* ]] && [[ "$unit_log" != *"unit.jobs"* ]]; then
  echo "ok: gpu-run.sh --prebuilt leaves out unit.jobs where miniapp_jobs_tests is absent, and says so"
else echo "FAIL: gpu-run.sh --prebuilt without miniapp_jobs_tests: steps.tsv reads: $steps; unit log: $unit_log"
  failures=$((failures + 1)); fi
mkdir -p "$tmp/hostfake/project/tests"; cp "$(type -P true)" "$tmp/hostfake/project/tests/miniapp_jobs_tests"
expect 0 "unit-tests: ok" "$G" "${only_units[@]}" --results "$tmp/jr2"
steps=$(cat "$tmp"/jr2/*/steps.tsv 2>/dev/null); unit_log=$(cat "$tmp"/jr2/*/logs/unit-tests.log 2>/dev/null)
if [[ "$steps" != *"unit-tests:jobs"* ]] && [[ "$unit_log" == *"unit.jobs"*"Passed"* ]]; then
  echo "ok: gpu-run.sh --prebuilt runs unit.jobs where miniapp_jobs_tests is there"
else echo "FAIL: gpu-run.sh --prebuilt with miniapp_jobs_tests: steps.tsv reads: $steps; unit log: $unit_log"
  failures=$((failures + 1)); fi
# pack-prebuilt.sh: refused without a build or without its program; a fake build packs its program,
# its unit-test program (not miniapp_jobs_tests), its ctest file, its env and the bundle's shared
# libraries, at their absolute paths, nothing else.
P="$SRC/scripts/pack-prebuilt.sh"
expect 2 "not a build of scripts/build-offline.sh" "$P" "$tmp/empty" "$tmp/p.tar.xz"
mkdir -p "$tmp/pb/project/bin" "$tmp/pb/project/tests" "$tmp/pb/bundle/prefix/usr/lib" "$tmp/pb/bundle/prefix/usr/include"
printf 'PROJECT_BUILD=%s\nBUNDLE=%s\n' "$tmp/pb/project" "$tmp/pb/bundle" >"$tmp/pb/offline-build.env"
expect 2 "no $tmp/pb/project/bin/miniapp" "$P" "$tmp/pb" "$tmp/p.tar.xz"
cp "$(type -P true)" "$tmp/pb/project/bin/miniapp"
cp "$(type -P true)" "$tmp/pb/project/tests/miniapp_unit_tests"; cp "$(type -P true)" "$tmp/pb/project/tests/miniapp_jobs_tests"
echo "add_test(x)" >"$tmp/pb/project/tests/CTestTestfile.cmake"
echo lib >"$tmp/pb/bundle/prefix/usr/lib/libx.so.1"; echo header >"$tmp/pb/bundle/prefix/usr/include/x.h"
expect 0 "unpack on the node with tar -xJf p.tar.xz -C /" "$P" "$tmp/pb" "$tmp/p.tar.xz"
packed=$(tar -tJf "$tmp/p.tar.xz" 2>/dev/null | grep -v '/$' | sed 's|^\./||' | sort | paste -sd' ')
want=$(printf '%s\n' "$tmp/pb/bundle/prefix/usr/lib/libx.so.1" "$tmp/pb/offline-build.env" "$tmp/pb/project/bin/miniapp" \
         "$tmp/pb/project/tests/CTestTestfile.cmake" "$tmp/pb/project/tests/miniapp_unit_tests" | sed 's|^/||' | sort | paste -sd' ')
if [ "$packed" = "$want" ]; then echo "ok: pack-prebuilt.sh packs $packed"
else echo "FAIL: pack-prebuilt.sh packed '$packed', wanted '$want'"; failures=$((failures + 1)); fi
# Every patch in scripts/patches/ for a release the list knows is named for that release.
for patch in "$SRC"/scripts/patches/kokkos-*-cuda13.patch; do
  v=$(basename "$patch" | sed -E 's/^kokkos-(.*)-cuda13\.patch$/\1/')
  [ "$v" = 3.4.01 ] && continue  # Debian's trilinos sources, not a release tarball
  if ! grep -q "^kokkos-$v.tar.gz	" "$SRC/scripts/lib/kokkos-releases.tsv"; then
    echo "FAIL: $(basename "$patch") is for Kokkos $v, which scripts/lib/kokkos-releases.tsv does not list"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] && echo "all refused as they should be" || { echo "$failures failure(s)"; exit 1; }
