#!/usr/bin/env bash
# Builds the project for real against Debian sid's own Kokkos packages and runs its unit and e2e
# tests there (issue 26):
#   4.5.1  libtrilinos-kokkos-dev + libtrilinos-kokkos-kernels-dev 16.1 (Kokkos/Kokkos Kernels
#          4.5.1, Serial only), g++ 16;
#   5.2.2  libkokkos-dev 5.2.2 (OpenMP only, no Kokkos Kernels in Debian): the Kokkos Kernels
#          variants must be reported absent, everything else must pass.
#
#   check_kokkos_build.sh 4.5.1|5.2.2 SOURCE_DIR
#
# sid's libraries need sid's glibc, so each stack lives in a sid chroot of its own, kept in
# $MINIAPP_CACHE/chroot-sid-kokkos-<v> (never in the system's apt configuration) with its build
# tree, so a second run is incremental. Both stacks start from one debootstrap of sid, kept in
# $MINIAPP_CACHE/chroot-sid-base and copied (the two Kokkos packages conflict, so they cannot
# share a chroot). The source is bind-mounted read-only; /proc is mounted for the run and
# unmounted on exit, whatever happens. The project is built at -O1 (build type Compat) and as a
# unity build: these builds check that it compiles and gives right answers on these stacks, not
# its speed, and -O1 compiles in 0.56x -O3's time.
#
# Debian's libkokkos-dev 5.2.2 names libkokkosalgorithms.a and libkokkossimd.a in its
# KokkosTargets.cmake but does not ship them, so find_package(Kokkos) fails: inside that chroot
# only, two empty archives of those names stand in (the project links neither).
#
# Prints "skipped: <why>" (exit 0, which ctest reports as skipped) only when this cannot be root
# or Debian's archive cannot be reached.
set -uo pipefail

VERSION=${1:?usage: check_kokkos_build.sh 4.5.1|5.2.2 SOURCE_DIR}
SRC=$(cd "${2:?usage: check_kokkos_build.sh 4.5.1|5.2.2 SOURCE_DIR}" && pwd)
CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
ROOTFS="$CACHE_ROOT/chroot-sid-kokkos-$VERSION"
BASE="$CACHE_ROOT/chroot-sid-base"
MIRROR=${MINIAPP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
JOBS=${MINIAPP_JOBS:-$(nproc)}
COMMON=(g++ cmake ninja-build python3 python3-jsonschema libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
        libopenblas0-openmp libopenblas-openmp-dev)
case "$VERSION" in
  4.5.1) PACKAGES=(libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev); TESTS='^(unit\.(serial|common|kokkos-tools)|e2e)$' ;;
  5.2.2) PACKAGES=(libkokkos-dev); TESTS='^(unit\.(openmp|common|kokkos-tools)|e2e)$' ;;
  *) echo "FAIL: unknown Kokkos stack '$VERSION' (4.5.1 or 5.2.2)"; exit 2 ;;
esac
log() { printf '[compat %s %3ds] %s\n' "$VERSION" "$SECONDS" "$*"; }

[ "$(id -u)" -eq 0 ] || { echo "skipped: a chroot needs root"; exit 0; }

mounted=()
cleanup() {
  local m
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 143' TERM INT

make_chroot() {
  if [ -f "$ROOTFS/.complete" ]; then
    # A chroot cached before a package joined the lists gets it now.
    chroot "$ROOTFS" dpkg -s "${COMMON[@]}" "${PACKAGES[@]}" >/dev/null 2>&1 && return 0
    log "installing the packages the cached chroot lacks"
    { chroot "$ROOTFS" apt-get update -q &&
      chroot "$ROOTFS" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${COMMON[@]}" "${PACKAGES[@]}"; } >"$ROOTFS.apt.log" 2>&1 \
      || { echo "FAIL: installing the packages in the cached sid chroot failed"; tail -n 20 "$ROOTFS.apt.log"; exit 1; }
    return 0
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; } \
        >"$CACHE_ROOT/debootstrap-install.log" 2>&1; then
      echo "skipped: cannot install debootstrap from Debian's archive (see $CACHE_ROOT/debootstrap-install.log)"
      exit 0
    fi
  fi
  if [ ! -f "$BASE/.complete" ]; then
    rm -rf "$BASE"
    mkdir -p "$BASE"
    log "debootstrap sid -> $BASE"
    if ! debootstrap --variant=minbase sid "$BASE" "$MIRROR" >"$BASE.debootstrap.log" 2>&1; then
      if grep -qiE "resolve|connect|Failed getting release file" "$BASE.debootstrap.log"; then
        echo "skipped: cannot reach Debian sid at $MIRROR (see $BASE.debootstrap.log)"; rm -rf "$BASE"; exit 0
      fi
      echo "FAIL: debootstrap of sid failed"; tail -n 20 "$BASE.debootstrap.log"; exit 1
    fi
    # sid's Release file may be past its Valid-Until on the archive reachable here.
    echo 'Acquire::Check-Valid-Until "false";' >"$BASE/etc/apt/apt.conf.d/99miniapp-valid-until"
    touch "$BASE/.complete"
  fi
  rm -rf "$ROOTFS"
  log "copying $BASE -> $ROOTFS"
  cp -a "$BASE" "$ROOTFS" && rm -f "$ROOTFS/.complete" \
    || { echo "FAIL: cannot copy the sid chroot $BASE to $ROOTFS"; rm -rf "$ROOTFS"; exit 1; }
  log "apt-get install ${PACKAGES[*]} and the build tools"
  if ! { chroot "$ROOTFS" apt-get update -q &&
         chroot "$ROOTFS" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
           "${COMMON[@]}" "${PACKAGES[@]}"; } >"$ROOTFS.apt.log" 2>&1; then
    echo "FAIL: installing the packages in the sid chroot failed"; tail -n 20 "$ROOTFS.apt.log"; exit 1
  fi
  if [ "$VERSION" = 5.2.2 ]; then
    local lib="$ROOTFS/usr/lib/x86_64-linux-gnu" name
    for name in libkokkosalgorithms.a libkokkossimd.a; do
      [ -e "$lib/$name" ] || chroot "$ROOTFS" ar rc "/usr/lib/x86_64-linux-gnu/$name"
    done
  fi
  touch "$ROOTFS/.complete"
}

make_chroot
mkdir -p "$ROOTFS/src" "$ROOTFS/proc"
mount --bind "$SRC" "$ROOTFS/src" && mounted=("$ROOTFS/src" "${mounted[@]}") \
  && mount -o remount,bind,ro "$ROOTFS/src" \
  || { echo "FAIL: cannot bind-mount $SRC into the chroot"; exit 1; }
mount -t proc proc "$ROOTFS/proc" && mounted=("$ROOTFS/proc" "${mounted[@]}") \
  || { echo "FAIL: cannot mount /proc in the chroot"; exit 1; }

kokkos=$(sed -nE 's/^#define KOKKOS_VERSION ([0-9]+)$/\1/p' "$ROOTFS"/usr/include/kokkos/KokkosCore_config.h)
log "Kokkos $kokkos, $(chroot "$ROOTFS" g++ --version | head -n 1)"

# The build tree stays in the chroot between runs; a git checkout's own build dir is not used.
inside() { chroot "$ROOTFS" env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 OMP_PROC_BIND=false \
             OMP_NUM_THREADS=2 bash -c "$1"; }
log "configuring and building (miniapp, unit and e2e tests, the Kokkos Tools test library)"
# A unity build, as the device checks (CMake merges up to 8 sources of a target; the workloads'
# generated units stay apart): most units that launch no kernel spend their time parsing the same
# Kokkos, yaml-cpp and GoogleTest headers. The main build, unmerged, catches a missing include.
if ! inside "set -e; cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Compat -DCMAKE_CXX_FLAGS_COMPAT=-O1 \
               -DMINIAPP_ENABLE_BENCHMARKS=OFF -DCMAKE_UNITY_BUILD:BOOL=ON \
               -DMINIAPP_WITH_KOKKOS_KERNELS=AUTO >/build.configure.log 2>&1 || { cat /build.configure.log; exit 1; }
             grep -E 'miniapp: Kokkos' /build.configure.log || true
             ninja -C /build -j $JOBS miniapp miniapp_unit_tests miniapp_e2e_tests miniapp_nvml_standin miniapp_region_tree \
               >/build.log 2>&1 || { tail -n 60 /build.log; exit 1; }"; then
  echo "FAIL: the project does not build against Kokkos $VERSION"; exit 1
fi
if [ "$VERSION" = 5.2.2 ]; then
  # Without Kokkos Kernels its variants are listed as absent, with the reason.
  inside "/build/bin/miniapp --list" >"$ROOTFS/list.txt" 2>&1
  for variant in gemm-kokkos-kernels dense-blocked batched-kokkos-kernels; do
    grep -E "$variant.*(unavailable|needs Kokkos Kernels)" "$ROOTFS/list.txt" >/dev/null \
      || { echo "FAIL: --list does not report $variant absent without Kokkos Kernels"; cat "$ROOTFS/list.txt"; exit 1; }
  done
  log "--list reports the Kokkos Kernels variants absent"
fi
log "ctest -R '$TESTS'"
inside "cd /build && ctest --output-on-failure --timeout 900 -R '$TESTS'"
rc=$?
[ "$rc" -eq 0 ] && echo "Kokkos $VERSION: the project builds and its unit and e2e tests pass"
exit "$rc"
