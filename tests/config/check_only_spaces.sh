#!/usr/bin/env bash
# MINIAPP_ONLY_SPACES (cmake/MiniappSpaces.cmake), by configuring the project for real against the
# build's own Kokkos in scratch directories (a few seconds; nothing is compiled):
#   - a name the Kokkos lacks stops the configuration, naming it, and leaves no build files;
#   - one space kept: the space table expands only that space, the workloads get a generated unit
#     for it alone and the unit tests a ctest for it alone;
#   - emptied again: every compiled space is back.
#
#   check_only_spaces.sh SOURCE_DIR CXX KOKKOS_DIR KOKKOSKERNELS_DIR SPACES
# SPACES: the deck names of the spaces the build compiles, comma-separated (host spaces first).
set -uo pipefail
SRC=$1; CXX=$2; KOKKOS_DIR=$3; KERNELS_DIR=$4; IFS=, read -r -a spaces <<<"$5"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
configure() {  # directory, MINIAPP_ONLY_SPACES
  local kernels=()
  case "$KERNELS_DIR" in ""|*NOTFOUND) ;; *) kernels=(-DKokkosKernels_DIR="$KERNELS_DIR") ;; esac
  cmake -S "$SRC" -B "$tmp/$1" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" -DKokkos_DIR="$KOKKOS_DIR" "${kernels[@]}" \
    -DMINIAPP_ENABLE_BENCHMARKS=OFF -DMINIAPP_WITH_MPI=OFF -DMINIAPP_ONLY_SPACES="$2" >"$tmp/$1.log" 2>&1
}
[ "${#spaces[@]}" -gt 0 ] || fail "no compiled spaces given"
kept=${spaces[${#spaces[@]} - 1]}

configure bad "$kept;warp" && fail "MINIAPP_ONLY_SPACES naming 'warp' configured"
grep -q "MINIAPP_ONLY_SPACES names 'warp', which this Kokkos was not built with" "$tmp/bad.log" \
  || { cat "$tmp/bad.log"; fail "the error does not name 'warp'"; }
[ ! -e "$tmp/bad/build.ninja" ] || fail "a refused configuration wrote build.ninja"

configure one "$kept" || { cat "$tmp/one.log"; fail "MINIAPP_ONLY_SPACES=$kept did not configure"; }
table="$tmp/one/generated/miniapp/space_table.hpp"
for name in serial openmp threads cuda hip; do
  device=$(echo "$name" | tr a-z A-Z)
  if [ "$name" = "$kept" ]; then
    grep -q "^#define MINIAPP_FOR_$device(X, W) X(W, " "$table" || fail "$kept is not expanded in the space table"
  else
    grep -qx "// $name: left out by MINIAPP_ONLY_SPACES" "$table" || fail "$name is not left out of the space table"
    grep -q "^#define MINIAPP_FOR_$device(X, W) X(W, " "$table" && fail "$name is expanded in the space table"
  fi
done
units=$(cd "$tmp/one/generated/workloads" && ls | sed 's/^[a-z]*_\([a-z]*\)\.cpp$/\1/' | sort -u | paste -sd' ')
[ "$units" = "$kept" ] || fail "generated units for '$units', expected $kept only"
tests=$(grep -o 'add_test(unit\.[a-z]* "[^"]*miniapp_unit_tests" "--gtest_filter=\*/' "$tmp/one/tests/CTestTestfile.cmake" \
  | sed 's/add_test(unit\.\([a-z]*\) .*/\1/' | paste -sd' ')
[ "$tests" = "$kept" ] || fail "per-space unit ctests '$tests', expected $kept only"

configure one "" || { cat "$tmp/one.log"; fail "MINIAPP_ONLY_SPACES emptied did not configure"; }
for name in "${spaces[@]}"; do
  grep -q "add_test(unit\.$name " "$tmp/one/tests/CTestTestfile.cmake" || fail "unit.$name is not back with MINIAPP_ONLY_SPACES empty"
done
echo "ok: MINIAPP_ONLY_SPACES refuses 'warp', keeps $kept alone, and gives back ${spaces[*]} when emptied"
