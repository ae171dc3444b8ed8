#!/usr/bin/env bash
# Whether this node can run a build that scripts/build-offline.sh made on another machine
# (scripts/gpu-run.sh --prebuilt): its programs are there, every shared library they load is found
# (the bundle's, through their run path, which must be the same path here), and this CPU has every
# instruction-set feature of the machine that compiled the host code (-march=native there).
#
#   check-prebuilt.sh BUILD_DIR
#
# Exit codes: 0 it can; 1 it cannot (the reason is printed).
set -uo pipefail
BUILD=${1:?usage: check-prebuilt.sh BUILD_DIR}
fail() { echo "check-prebuilt: $*" >&2; exit 1; }
env_file="$BUILD/offline-build.env"
[ -f "$env_file" ] || fail "no $env_file: not a build of scripts/build-offline.sh"
built() { sed -n "s/^$1=//p" "$env_file" | tr -d '"' | head -n 1; }
project=$(built PROJECT_BUILD)
[ -n "$project" ] || fail "$env_file names no PROJECT_BUILD"
echo "prebuilt on $(built BUILD_HOST) in $(built BUILD_SECONDS) s: project $(built PROJECT_COMMIT), Kokkos $(built KOKKOS_VERSION) ($(built KOKKOS_DESCRIPTION))"
[ -x "$project/bin/miniapp" ] || fail "no $project/bin/miniapp (the build's project directory must be at the same path here)"

missing=()
for feature in $(built BUILD_CPU_ISA); do
  grep -qw -- "$feature" <(grep -m 1 '^flags' /proc/cpuinfo) || missing+=("$feature")
done
[ ${#missing[@]} -eq 0 ] || fail "the host code was compiled for CPU features this node lacks: ${missing[*]} (build here with scripts/build-offline.sh)"
[ -n "$(built BUILD_CPU_ISA)" ] && echo "CPU features of the build host, all present here: $(built BUILD_CPU_ISA)"

for exe in "$project"/bin/* "$project"/tests/miniapp_*_tests; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  out=$(ldd "$exe" 2>&1) || fail "ldd $exe failed: $out"
  if grep -q 'not found' <<<"$out"; then fail "$exe misses shared libraries: $(grep 'not found' <<<"$out" | paste -sd' ')"; fi
  echo "ok: $(basename "$exe") finds its libraries"
done
