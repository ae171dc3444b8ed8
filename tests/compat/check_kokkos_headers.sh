#!/usr/bin/env bash
# Compiles every C++ source of the project with -fsyntax-only against newer Kokkos headers than
# the 3.4.01 the build uses, taken from Debian sid's packages (unpacked, never installed: their
# libraries need a newer glibc):
#   - libtrilinos-kokkos-dev + libtrilinos-kokkos-kernels-dev 16.1 (Kokkos/Kokkos Kernels 4.5.1),
#     C++17, for every source;
#   - libkokkos-dev 5.2.2, C++20, for the sources that do not include Kokkos Kernels.
#
#   check_kokkos_headers.sh SOURCE_DIR [CXX]
#
# Prints "skipped: <why>" (and exits 0, which ctest reports as skipped) only when the packages
# cannot be downloaded.
set -uo pipefail

SRC=${1:?usage: check_kokkos_headers.sh SOURCE_DIR [CXX]}
CXX=${2:-g++}
CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
SID="$CACHE_ROOT/sid-headers"
PACKAGES=(libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libkokkos-dev)
JOBS=${MINIAPP_JOBS:-$(nproc)}

fetch() {
  [ -f "$SID/.complete" ] && return 0
  rm -rf "$SID"
  mkdir -p "$SID/apt/sources" "$SID/apt/lists/partial" "$SID/apt/cache/archives/partial" "$SID/debs"
  echo "deb http://deb.debian.org/debian sid main" >"$SID/apt/sources/sid.list"
  # A private source list, state and cache: sid never reaches the system's apt configuration.
  local opts=(-o "Dir::Etc::SourceParts=$SID/apt/sources" -o Dir::Etc::SourceList=/dev/null
              -o "Dir::State::Lists=$SID/apt/lists" -o "Dir::Cache=$SID/apt/cache"
              -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root)
  if ! apt-get "${opts[@]}" update >"$SID/apt.log" 2>&1; then
    echo "skipped: cannot reach Debian sid to download ${PACKAGES[*]} (see $SID/apt.log)"
    exit 0
  fi
  if ! (cd "$SID/debs" && apt-get "${opts[@]}" download "${PACKAGES[@]}" >>"$SID/apt.log" 2>&1); then
    echo "skipped: cannot download ${PACKAGES[*]} from Debian sid (see $SID/apt.log)"
    exit 0
  fi
  # Both packages install usr/include/kokkos: unpack Kokkos 5 into a tree of its own.
  for deb in "$SID"/debs/libtrilinos-*.deb; do dpkg-deb -x "$deb" "$SID/trilinos" || { echo "FAIL: cannot unpack $deb"; exit 1; }; done
  for deb in "$SID"/debs/libkokkos-dev_*.deb; do dpkg-deb -x "$deb" "$SID/kokkos5" || { echo "FAIL: cannot unpack $deb"; exit 1; }; done
  touch "$SID/.complete"
}

fetch
INC="$SID/trilinos/usr/include"
K5INC="$SID/kokkos5/usr/include/kokkos"
[ -f "$INC/kokkos/Kokkos_Core.hpp" ] && [ -f "$INC/trilinos/KokkosBlas.hpp" ] && [ -f "$K5INC/Kokkos_Core.hpp" ] \
  || { echo "FAIL: unpacked sid packages lack the expected headers under $SID"; exit 1; }
version_of() { sed -nE 's/^#define KOKKOS_VERSION ([0-9]+)$/\1/p' "$1/KokkosCore_config.h"; }
echo "Kokkos headers: $(version_of "$INC/kokkos") (trilinos 16.1) and $(version_of "$K5INC") (libkokkos-dev)"

cd "$SRC"
mapfile -t SOURCES < <(git ls-files '*.cpp' 2>/dev/null || find miniapp tests benchmarks -name '*.cpp')
[ ${#SOURCES[@]} -gt 0 ] || { echo "FAIL: no sources found under $SRC"; exit 1; }

# The headers CMake generates at configure time (cmake/*.hpp.in -> <build>/generated/miniapp/),
# with every @VALUE@ a placeholder: only their syntax matters here.
GEN=$(mktemp -d)
trap 'rm -rf "$GEN"' EXIT
mkdir -p "$GEN/miniapp"
for template in cmake/*.hpp.in; do
  [ -f "$template" ] || continue
  sed -E 's/@[A-Z_]+@/syntax check/g' "$template" >"$GEN/miniapp/$(basename "$template" .in)"
done
COMMON=(-fsyntax-only -fopenmp -I"$SRC" -I"$GEN" -I"$SRC/tests/unit" -DMINIAPP_KOKKOSKERNELS_VERSION='"syntax-check"'
        -DMINIAPP_BINARY='"miniapp"' -DMINIAPP_SOURCE_DIR='"."')
K4=("$CXX" -std=c++17 "${COMMON[@]}" -isystem "$INC/kokkos" -isystem "$INC/trilinos")
K5=("$CXX" -std=c++20 "${COMMON[@]}" -isystem "$K5INC")

# A source uses Kokkos Kernels when any header it pulls in comes from the Kokkos Kernels package.
# grep reads the whole list (no -q): stopping at the first match would SIGPIPE `tr`, which
# pipefail reports as "does not use Kokkos Kernels".
uses_kokkos_kernels() {
  "${K4[@]}" -M "$1" 2>/dev/null | tr ' \\' '\n\n' |
    grep -E "$INC/trilinos/Kokkos(Blas|Batched|Kernels|Sparse|Graph|ODE|Lapack)" >/dev/null
}

check() {  # label, source, compiler command...
  local label=$1 src=$2; shift 2
  local log; log=$(mktemp)
  if "$@" "$src" >"$log" 2>&1; then
    echo "ok    [$label] $src"
  else
    echo "FAIL  [$label] $src"; sed 's/^/      /' "$log" | head -n 40
    rm -f "$log"; return 1
  fi
  rm -f "$log"
}
export -f check uses_kokkos_kernels
export INC

failures=0
run_all() {  # label, then the compiler command; sources on stdin
  local label=$1; shift
  local cmd; printf -v cmd '%q ' "$@"
  xargs -P "$JOBS" -I{} bash -c "check $label {} $cmd" || return 1
}
printf '%s\n' "${SOURCES[@]}" | run_all kokkos-4.5.1 "${K4[@]}" || failures=1

K5_SOURCES=()
for s in "${SOURCES[@]}"; do uses_kokkos_kernels "$s" || K5_SOURCES+=("$s"); done
echo "${#K5_SOURCES[@]} of ${#SOURCES[@]} sources do not use Kokkos Kernels: checking them against Kokkos 5.2.2"
printf '%s\n' "${K5_SOURCES[@]}" | run_all kokkos-5.2.2 "${K5[@]}" || failures=1

[ "$failures" -eq 0 ] && echo "all sources compile against Kokkos 4.5.1 and 5.2.2 headers" && exit 0
echo "FAIL: some sources do not compile against newer Kokkos headers"
exit 1
