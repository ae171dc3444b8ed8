#!/usr/bin/env bash
# scripts/lib/benchmark-forms.tsv (what gpu-run.sh --benchmark-forms runs) against the sources
# and the build:
# - every variant `miniapp --list` names has a workload family (WORKLOAD-VARIANT, or
#   WORKLOAD-VARIANT-something where its benchmarks name an operation, as elementwise's power and
#   multiply);
# - the benchmark program registers every workload family, unless --list marks its variant
#   unavailable in this build (KokkosBatched on Kokkos Kernels 3.4.01), and on a device build
#   (a space --list marks "(device)") every open family as well: most open forms are
#   registered on device spaces only. A build whose targets left the benchmark program out (the
#   offline rehearsal's) has no registrations to check: the test says so and checks the rest;
# - the benchmark sources name every open family: as a literal ("family/...), or as a literal
#   prefix ending in '-' and a literal rest ("regression-sums-" + "registers-lanes4-rows2");
# - each row has a family, a set (workload or open) and what it is for, and no family repeats.
#   test_benchmark_forms.sh SOURCE_DIR MINIAPP MINIAPP_BENCHMARKS
set -uo pipefail
SRC=$1 MINIAPP=$2 BENCHMARKS=$3
TSV="$SRC/scripts/lib/benchmark-forms.tsv"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
rows=$(grep -v -e '^#' -e '^[[:space:]]*$' "$TSV")
bad=$(awk -F'\t' 'NF != 4 || ($2 != "workload" && $2 != "open") || $3 == "" || $4 == ""' <<<"$rows")
[ -z "$bad" ] || fail "rows of benchmark-forms.tsv without a family, a set (workload, open), a purpose and what it is measured against (or -): $bad"
bad=$(awk -F'\t' '$2 == "workload" && $4 != "-"' <<<"$rows")
[ -z "$bad" ] || fail "workload rows of benchmark-forms.tsv are no prepared forms, yet name what they are measured against: $bad"
twice=$(cut -f1 <<<"$rows" | sort | uniq -d)
[ -z "$twice" ] || fail "families listed twice in benchmark-forms.tsv: $twice"
workload=$(awk -F'\t' '$2 == "workload" {print $1}' <<<"$rows"); open=$(awk -F'\t' '$2 == "open" {print $1}' <<<"$rows")
[ -n "$workload" ] && [ -n "$open" ] || fail "benchmark-forms.tsv has no workload or no open rows"
list=$(OMP_PROC_BIND=false "$MINIAPP" --list) || { echo "FAIL: $MINIAPP --list failed"; exit 1; }
# "  workload: ..." then "    - variant: ..." up to the spaces' section, which follows
variants=$(awk '/^execution spaces/ {exit} /^  [a-z]+: / {w = $1; sub(/:$/, "", w)}
                /^    - [a-z0-9-]+: / {v = $2; sub(/:$/, "", v); print w "-" v (/\[unavailable/ ? " unavailable" : "")}' <<<"$list")
[ "$(wc -l <<<"$variants")" -ge 10 ] || { echo "FAIL: fewer than 10 variants read from --list: $variants"; exit 1; }
device_build=0
awk '/^execution spaces/ {s = 1} s && / \(device\)$/ {found = 1} END {exit !found}' <<<"$list" && device_build=1
built=1
if [ ! -x "$BENCHMARKS" ]; then
  built=0
  echo "not checked: the registrations, for $BENCHMARKS is not built (the build's targets left it out)"
else
  listed=$(OMP_PROC_BIND=false "$BENCHMARKS" --benchmark_list_tests 2>/dev/null)
  registered=$(sed -n 's|^\([a-z0-9-]*\)/.*|\1|p' <<<"$listed" | sort -u)
  [ -n "$registered" ] || { echo "FAIL: $BENCHMARKS --benchmark_list_tests listed nothing"; exit 1; }
fi
while read -r name _; do
  if grep -qx -e "$name" -e "$name-[a-z]*" <<<"$workload"; then echo "ok: $name has its workload family"
  else fail "the variant $name (miniapp --list) has no workload family in benchmark-forms.tsv"; fi
done <<<"$variants"
[ "$built" = 1 ] && for f in $workload; do
  if grep -qx "$f" <<<"$registered"; then echo "ok: $f is registered by the benchmark program"
  elif grep -qx "$f unavailable" <<<"$variants"; then echo "ok: $f not registered, its variant unavailable in this build"
  else fail "benchmark-forms.tsv names $f, which $(basename "$BENCHMARKS") does not register"; fi
done
literals=$(cat "$SRC"/benchmarks/*.cpp | grep -o '"[a-z][a-z0-9-]*' | cut -c2- | sort -u)
for f in $open; do
  named=0
  grep -qx "$f" <<<"$literals" && named=1
  while [ "$named" = 0 ] && read -r prefix; do
    grep -qx "${f#"$prefix"}" <<<"$literals" && named=1
  done < <(grep -- '-$' <<<"$literals" | while read -r p; do [[ "$f" == "$p"?* ]] && echo "$p"; done)
  if [ "$named" = 1 ]; then echo "ok: the benchmark sources name $f"
  else fail "benchmark-forms.tsv names the open form $f, which no benchmark source names"; fi
  if [ "$built" = 1 ] && [ "$device_build" = 1 ] && ! grep -qx "$f" <<<"$registered"; then
    fail "the device build's $(basename "$BENCHMARKS") does not register the open form $f"
  fi
done
[ "$built" = 1 ] && [ "$device_build" = 1 ] && echo "ok: a device build: its open forms checked against its registrations"
# what each prepared form is measured against (the fourth column, scripts/prepared_forms.py): a
# family of the table, other than the form; where the build registers both, at some of the same
# precision, space and arguments (else the summary has nothing to set side by side)
all_families=$(cut -f1 <<<"$rows")
while IFS=$'\t' read -r form against; do
  for other in ${against//,/ }; do
    if [ "$other" = "$form" ] || ! grep -qx -- "$other" <<<"$all_families"; then
      fail "benchmark-forms.tsv measures $form against '$other', which is no other family of the table"
      continue
    fi
    [ "$built" = 1 ] && grep -qx -- "$form" <<<"$registered" && grep -qx -- "$other" <<<"$registered" || continue
    shared=$(comm -12 <(sed -n "s|^$form/||p" <<<"$listed" | sort -u) <(sed -n "s|^$other/||p" <<<"$listed" | sort -u))
    if [ -n "$shared" ]; then echo "ok: $form and $other share $(wc -l <<<"$shared") benchmark(s)"
    else fail "$form is measured against $other, but the two share no precision, space and arguments"; fi
  done
done < <(awk -F'\t' '$2 == "open" && $4 != "-" {print $1 "\t" $4}' <<<"$rows")
if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"
elif [ "$built" = 1 ]; then echo "benchmark-forms.tsv matches the sources and the build"
else echo "benchmark-forms.tsv matches the sources and --list (registrations not checked)"; fi
[ "$failures" -eq 0 ]
