#!/usr/bin/env bash
# Installs what the mini-app needs on Debian and builds Kokkos + Kokkos Kernels from the
# trilinos source package of this Debian release into a cache prefix outside the source tree.
#
#   scripts/bootstrap-debian.sh [--print-prefix] [--packages-only]
#
# The prefix is keyed by Kokkos version, Kokkos Kernels version, backends and compiler, e.g.
#   ~/.cache/kokkos-miniapp/kokkos-3.4.01_kk-3.4.01_serial-openmp_gcc-12
# and is only trusted once it carries the stamp file written as the very last step, so a killed
# or failed build is rebuilt from scratch rather than mistaken for a good one.
#
# Environment:
#   MINIAPP_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp)
#   MINIAPP_JOBS    parallel build jobs (default: nproc)
set -euo pipefail

readonly BACKENDS="serial-openmp"
readonly STAMP_NAME=".miniapp-bootstrap-complete"
readonly OPENBLAS_DIR="/usr/lib/x86_64-linux-gnu/openblas-openmp"
readonly PACKAGES=(
  cmake ninja-build g++ pkg-config
  libyaml-cpp-dev libbenchmark-dev libbenchmark-tools libgtest-dev libgmock-dev
  libopenblas-openmp-dev liblapacke-dev
  dpkg-dev xz-utils ca-certificates
)

CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
JOBS="${MINIAPP_JOBS:-$(nproc)}"
START_SECONDS=$SECONDS
PRINT_PREFIX=0
PACKAGES_ONLY=0

for arg in "$@"; do
  case "$arg" in
    --print-prefix) PRINT_PREFIX=1 ;;
    --packages-only) PACKAGES_ONLY=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bootstrap: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[bootstrap %3ds] %s\n' "$((SECONDS - START_SECONDS))" "$*" >&2; }
die() { printf '[bootstrap] ERROR: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@" || die "'$*' needs root; run as root or allow sudo"
  else die "'$*' needs root and sudo is not available"
  fi
}

apt_update() {
  log "apt-get update"
  as_root apt-get update -q >"$CACHE_ROOT/apt-update.log" 2>&1 \
    || die "apt-get update failed (is the Debian archive reachable?); see $CACHE_ROOT/apt-update.log"
}

ensure_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  apt_update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    >"$CACHE_ROOT/apt-install.log" 2>&1 \
    || die "apt-get install ${missing[*]} failed; see $CACHE_ROOT/apt-install.log"
}

has_deb_src() {
  grep -rqsE '^(deb-src[[:space:]]|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}

# Adds a deb-src entry mirroring the already-configured archive (same URIs, suites, components).
ensure_deb_src() {
  has_deb_src && return 0
  local target=/etc/apt/sources.list.d/miniapp-deb-src
  log "adding deb-src entries for the configured Debian archive ($target.*)"
  local tmp; tmp=$(mktemp)
  if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
    for f in /etc/apt/sources.list.d/*.sources; do
      grep -qi 'debian' "$f" || continue
      sed -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb-src/' "$f" >>"$tmp"
      echo >>"$tmp"
    done
    [ -s "$tmp" ] && as_root install -m 0644 "$tmp" "$target.sources"
  fi
  if [ ! -s "$tmp" ] && [ -f /etc/apt/sources.list ]; then
    sed -nE 's/^deb[[:space:]]+/deb-src /p' /etc/apt/sources.list >"$tmp"
    [ -s "$tmp" ] && as_root install -m 0644 "$tmp" "$target.list"
  fi
  rm -f "$tmp"
  has_deb_src || die "found no Debian archive in /etc/apt to derive a deb-src entry from"
  apt_update
}

# Extracts packages/kokkos and packages/kokkos-kernels of Debian's trilinos source package.
fetch_kokkos_sources() {
  local version
  version=$(apt-cache showsrc trilinos 2>/dev/null | awk '/^Version:/ {print $2; exit}')
  [ -n "$version" ] || die "apt knows no trilinos source package (deb-src entries missing or apt lists stale)"
  local upstream=${version%-*}; upstream=${upstream#*:}
  SRC_DIR="$CACHE_ROOT/src/trilinos-$upstream"
  [ -f "$SRC_DIR/.complete" ] && return 0

  log "downloading trilinos $version source package (about 170 MB)"
  rm -rf "$SRC_DIR" "$SRC_DIR.download"
  mkdir -p "$SRC_DIR.download"
  (cd "$SRC_DIR.download" && apt-get source --download-only -q "trilinos=$version" >download.log 2>&1) \
    || die "apt-get source trilinos=$version failed; see $SRC_DIR.download/download.log"
  local tarball; tarball=$(ls "$SRC_DIR.download"/trilinos_*.orig.tar.* | head -n 1)
  log "extracting packages/kokkos and packages/kokkos-kernels"
  mkdir -p "$SRC_DIR.tmp"
  tar -xf "$tarball" -C "$SRC_DIR.tmp" --strip-components=2 --wildcards \
    '*/packages/kokkos/*' '*/packages/kokkos-kernels/*' || die "extracting $tarball failed"
  rm -rf "$SRC_DIR.download"
  touch "$SRC_DIR.tmp/.complete"
  mv "$SRC_DIR.tmp" "$SRC_DIR"
}

cmake_version_of() {  # file, variable prefix -> MAJOR.MINOR.PATCH
  local f=$1 p=$2
  local ma mi pa
  ma=$(sed -nE "s/^ *[Ss][Ee][Tt] *\( *${p}_VERSION_MAJOR +([0-9]+).*/\1/p" "$f" | head -n 1)
  mi=$(sed -nE "s/^ *[Ss][Ee][Tt] *\( *${p}_VERSION_MINOR +([0-9]+).*/\1/p" "$f" | head -n 1)
  pa=$(sed -nE "s/^ *[Ss][Ee][Tt] *\( *${p}_VERSION_PATCH +([0-9]+).*/\1/p" "$f" | head -n 1)
  [ -n "$ma" ] && [ -n "$mi" ] && [ -n "$pa" ] || die "cannot read the $p version from $f"
  echo "$ma.$mi.$pa"
}

build_kokkos() {
  local prefix=$1 build=$2
  log "building Kokkos $KOKKOS_VERSION (Serial + OpenMP) -> $prefix"
  cmake -S "$SRC_DIR/kokkos" -B "$build/kokkos" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF \
    >"$build/kokkos-configure.log" 2>&1 || die "configuring Kokkos failed; see $build/kokkos-configure.log"
  ninja -C "$build/kokkos" -j "$JOBS" install >"$build/kokkos-build.log" 2>&1 \
    || die "building Kokkos failed; see $build/kokkos-build.log"

  # ETI off: templates are instantiated in the mini-app, which keeps this step to seconds.
  log "building Kokkos Kernels $KK_VERSION (ETI off, BLAS/LAPACK from OpenBLAS-OpenMP) -> $prefix"
  local -a eti_off=()
  for opt in INST_DOUBLE INST_FLOAT INST_OFFSET_INT INST_OFFSET_SIZE_T INST_ORDINAL_INT \
             INST_LAYOUTLEFT INST_LAYOUTRIGHT INST_COMPLEX_DOUBLE INST_COMPLEX_FLOAT; do
    eti_off+=("-DKokkosKernels_${opt}=OFF")
  done
  cmake -S "$SRC_DIR/kokkos-kernels" -B "$build/kokkos-kernels" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" \
    "${eti_off[@]}" -DKokkosKernels_ENABLE_TESTS=OFF \
    -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON \
    -DBLAS_LIBRARIES=openblas -DBLAS_LIBRARY_DIRS="$OPENBLAS_DIR" \
    -DLAPACK_LIBRARIES=openblas -DLAPACK_LIBRARY_DIRS="$OPENBLAS_DIR" \
    "-DF77_BLAS_MANGLE=(name,NAME) name ## _" \
    >"$build/kk-configure.log" 2>&1 || die "configuring Kokkos Kernels failed; see $build/kk-configure.log"
  ninja -C "$build/kokkos-kernels" -j "$JOBS" install >"$build/kk-build.log" 2>&1 \
    || die "building Kokkos Kernels failed; see $build/kk-build.log"
}

main() {
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.lock"
  flock 9  # one bootstrap at a time per cache

  ensure_packages
  [ "$PACKAGES_ONLY" -eq 1 ] && { log "packages ready"; return 0; }
  # Sources already extracted by an earlier run need neither apt lists nor the network.
  SRC_DIR=""
  for d in "$CACHE_ROOT"/src/trilinos-*; do [ -f "$d/.complete" ] && SRC_DIR=$d; done
  if [ -z "$SRC_DIR" ]; then ensure_deb_src; fetch_kokkos_sources; fi

  KOKKOS_VERSION=$(cmake_version_of "$SRC_DIR/kokkos/CMakeLists.txt" Kokkos)
  KK_VERSION=$(cmake_version_of "$SRC_DIR/kokkos-kernels/CMakeLists.txt" KokkosKernels)
  local compiler; compiler="gcc-$(g++ -dumpversion | cut -d. -f1)"
  local key="kokkos-${KOKKOS_VERSION}_kk-${KK_VERSION}_${BACKENDS}_${compiler}"
  local prefix="$CACHE_ROOT/$key"

  if [ ! -f "$prefix/$STAMP_NAME" ]; then
    local build="$CACHE_ROOT/build-$key"
    rm -rf "$prefix" "$build"
    mkdir -p "$build"
    build_kokkos "$prefix" "$build"
    printf 'kokkos=%s\nkokkos_kernels=%s\nbackends=%s\ncompiler=%s\nsource=%s\n' \
      "$KOKKOS_VERSION" "$KK_VERSION" "$BACKENDS" "$compiler" "$SRC_DIR" >"$prefix/$STAMP_NAME"
    rm -rf "$build"
    log "Kokkos + Kokkos Kernels installed in $prefix"
  fi
  [ "$PRINT_PREFIX" -eq 1 ] && echo "$prefix"
  return 0
}

main
