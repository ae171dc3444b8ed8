#!/usr/bin/env bash
# Installs what the mini-app needs on Debian and builds Kokkos + Kokkos Kernels from the
# trilinos source package of this Debian release into a cache prefix outside the source tree.
#
#   scripts/bootstrap-debian.sh [--backend host|cuda|hip] [--print-prefix] [--packages-only]
#                               [--print-sources]
#   scripts/bootstrap-debian.sh --fuzz-packages
#   scripts/bootstrap-debian.sh --report-packages
#
#   --backend host  (default) Serial + OpenMP with g++
#   --backend cuda  Serial + OpenMP + CUDA (sm_80), compiled with Kokkos' nvcc_wrapper; needs
#                   nvcc on PATH or in /usr/local/cuda/bin; Kokkos Kernels with cuBLAS. Kokkos
#                   sources get scripts/patches/kokkos-<version>-cuda13.patch (copy, not in place)
#   --backend hip   Serial + OpenMP + HIP (gfx908), compiled with Debian's hipcc (installed)
#   --fuzz-packages only installs Debian's clang with libFuzzer and LLVM's OpenMP headers, for the
#                   deck fuzz target (tests/sanitize/check_sanitizers.sh fuzz)
#   --report-packages only installs what `miniapp report` and its tests use: Debian's python3 with
#                   matplotlib and numpy, and chromium (headless, for the report's screenshot test);
#                   and numba, whose CUDA simulator checks benchmarks/peers.py's Numba kernel
#
# The prefix is keyed by Kokkos version, Kokkos Kernels version, backends and compiler, e.g.
#   ~/.cache/kokkos-miniapp/kokkos-3.4.01_kk-3.4.01_serial-openmp_gcc-12
#   ~/.cache/kokkos-miniapp/kokkos-3.4.01_kk-3.4.01_serial-openmp-cuda-sm80_gcc-12
#   ~/.cache/kokkos-miniapp/kokkos-3.4.01_kk-3.4.01_serial-openmp-hip-vega908_hipcc-5.2
# and is only trusted once it carries the stamp file written as the very last step, so a killed
# or failed build is rebuilt from scratch rather than mistaken for a good one. A cuda/hip prefix
# is also rebuilt when its stamp no longer matches (another toolkit or patch).
# The compiler for the project: <prefix>/bin/nvcc_wrapper (cuda), hipcc (hip).
# --print-sources builds nothing: it prints the directory holding the kokkos/ and kokkos-kernels/
# sources the backend is built from (with --backend cuda the patched copy; no nvcc needed), which
# scripts/bundle.sh packs for machines without network.
#
# Environment:
#   MINIAPP_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp)
#   MINIAPP_JOBS    parallel build jobs (default: nproc)
set -euo pipefail

readonly STAMP_NAME=".miniapp-bootstrap-complete"
readonly OPENBLAS_DIR="/usr/lib/x86_64-linux-gnu/openblas-openmp"
PATCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/patches"
readonly PATCH_DIR
readonly PACKAGES=(
  cmake ninja-build g++ pkg-config
  libyaml-cpp-dev libbenchmark-dev libbenchmark-tools libgtest-dev libgmock-dev
  libopenblas-openmp-dev liblapacke-dev
  dpkg-dev xz-utils ca-certificates
  python3 python3-jsonschema universal-ctags
  libopenmpi-dev openmpi-bin
)

CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
JOBS="${MINIAPP_JOBS:-$(nproc)}"
START_SECONDS=$SECONDS
PRINT_PREFIX=0
PACKAGES_ONLY=0
FUZZ_PACKAGES_ONLY=0
PRINT_SOURCES=0
REPORT_PACKAGES_ONLY=0
BACKEND=host

while [ $# -gt 0 ]; do
  case "$1" in
    --print-prefix) PRINT_PREFIX=1 ;;
    --packages-only) PACKAGES_ONLY=1 ;;
    --fuzz-packages) FUZZ_PACKAGES_ONLY=1 ;;
    --print-sources) PRINT_SOURCES=1 ;;
    --report-packages) REPORT_PACKAGES_ONLY=1 ;;
    --backend) [ $# -ge 2 ] || { echo "bootstrap: --backend needs host, cuda or hip" >&2; exit 2; }
               BACKEND=$2; shift ;;
    --backend=*) BACKEND=${1#--backend=} ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "bootstrap: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$BACKEND" in
  host|serial-openmp) BACKEND=host; BACKENDS="serial-openmp" ;;
  cuda) BACKENDS="serial-openmp-cuda-sm80" ;;
  hip) BACKENDS="serial-openmp-hip-vega908" ;;
  *) echo "bootstrap: unknown backend '$BACKEND' (host, cuda or hip)" >&2; exit 2 ;;
esac

log() { printf '[bootstrap %3ds] %s\n' "$((SECONDS - START_SECONDS))" "$*" >&2; }
die() { printf '[bootstrap] ERROR: %s\n' "$*" >&2; exit 1; }
die_log() {  # log file, message: shows the end of the log (the compiler's errors), then dies
  printf '[bootstrap] ---- last 60 lines of %s ----\n' "$1" >&2
  tail -n 60 "$1" >&2 || true
  die "$2"
}

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

ensure_packages() {  # packages...
  local missing=()
  for p in "$@"; do
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

# build_kokkos, kokkos_cuda_options: shared with scripts/build-offline.sh. Per backend,
# configure_backend sets what they read: KOKKOS_SRC, KOKKOS_CXX / KK_CXX, KOKKOS_EXTRA / KK_EXTRA,
# DESCRIPTION / KK_DESCRIPTION.
# shellcheck source=lib/kokkos-build.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/kokkos-build.sh"

# nvcc on PATH, else the toolkit's default location. Sets NVCC and puts its directory first on
# PATH (nvcc_wrapper runs plain `nvcc`).
find_nvcc() {
  NVCC=$(command -v nvcc 2>/dev/null || true)
  [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
  [ -n "$NVCC" ] || die "nvcc not found (neither on PATH nor in /usr/local/cuda/bin): install the CUDA toolkit"
  PATH="$(dirname "$NVCC"):$PATH"
  export PATH
}

# Kokkos releases before CUDA 13 need the patches of scripts/patches/, which are written for one
# Kokkos version each (kokkos-<version>-cuda13.patch). They go onto a copy of the extracted
# sources under $CACHE_ROOT/src-patched/ (the host build keeps the pristine ones); the copy is kept
# because the installed KokkosConfig records its nvcc_wrapper. Sets KOKKOS_SRC and PATCH_ID.
prepare_cuda_sources() {
  local patch="$PATCH_DIR/kokkos-$KOKKOS_VERSION-cuda13.patch"
  if [ ! -f "$patch" ]; then
    local known="" p
    for p in "$PATCH_DIR"/kokkos-*.patch; do [ -f "$p" ] && known+="${known:+ }$(basename "$p")"; done
    log "no patch for Kokkos $KOKKOS_VERSION in $PATCH_DIR (have: ${known:-none}): building it unpatched"
    KOKKOS_SRC=$SRC_DIR; PATCH_ID=none
    return 0
  fi
  PATCH_ID="$(basename "$patch" .patch)@$(sha256sum "$patch" | cut -c1-12)"
  KOKKOS_SRC="$CACHE_ROOT/src-patched/$(basename "$SRC_DIR")+$(basename "$patch" .patch)"
  [ -f "$KOKKOS_SRC/.complete" ] && [ "$(cat "$KOKKOS_SRC/.complete")" = "$PATCH_ID" ] && return 0
  log "applying $(basename "$patch") (Kokkos $KOKKOS_VERSION) to a copy of the sources -> $KOKKOS_SRC"
  rm -rf "$KOKKOS_SRC" "$KOKKOS_SRC.tmp"
  mkdir -p "$KOKKOS_SRC.tmp"
  cp -a "$SRC_DIR/kokkos" "$SRC_DIR/kokkos-kernels" "$KOKKOS_SRC.tmp/"
  patch -d "$KOKKOS_SRC.tmp" -p1 --forward --batch --no-backup-if-mismatch <"$patch" \
    >"$KOKKOS_SRC.tmp/patch.log" 2>&1 \
    || die_log "$KOKKOS_SRC.tmp/patch.log" "$(basename "$patch") does not apply to $SRC_DIR"
  echo "$PATCH_ID" >"$KOKKOS_SRC.tmp/.complete"
  mv "$KOKKOS_SRC.tmp" "$KOKKOS_SRC"
}

# Sets the per-backend variables used by build_kokkos and COMPILER_KEY / STAMP_EXTRA.
configure_backend() {
  KOKKOS_SRC=$SRC_DIR; KOKKOS_CXX=""; KK_CXX=""; KOKKOS_EXTRA=(); KK_EXTRA=(); STAMP_EXTRA=""
  DESCRIPTION="Serial + OpenMP"; KK_DESCRIPTION="BLAS/LAPACK from OpenBLAS-OpenMP"
  COMPILER_KEY="gcc-$(g++ -dumpversion | cut -d. -f1)"
  case "$BACKEND" in
    cuda)
      find_nvcc
      local nvcc_version; nvcc_version=$("$NVCC" --version | sed -nE 's/.*release ([0-9]+\.[0-9]+).*/\1/p')
      ensure_packages patch
      prepare_cuda_sources
      DESCRIPTION="Serial + OpenMP + CUDA $nvcc_version, sm_80, nvcc_wrapper"
      KOKKOS_CXX="$KOKKOS_SRC/kokkos/bin/nvcc_wrapper"
      kokkos_cuda_options AMPERE80
      KK_CXX=INSTALLED_NVCC_WRAPPER  # <prefix>/bin/nvcc_wrapper, set in main
      KK_DESCRIPTION="cuBLAS + BLAS/LAPACK from OpenBLAS-OpenMP, no cuSPARSE"
      STAMP_EXTRA="nvcc=$nvcc_version"$'\n'"patch=$PATCH_ID"
      ;;
    hip)
      local hipcc; hipcc=$(command -v hipcc) || die "hipcc is not installed (the hipcc package should have been)"
      # Without a target hipcc asks rocm_agent_enumerator, which fails (traceback) on GPU-less hosts.
      export HCC_AMDGPU_TARGET=${HCC_AMDGPU_TARGET:-gfx908}
      local hip_version; hip_version=$(dpkg-query -W -f='${Version}' hipcc)
      COMPILER_KEY="hipcc-$(echo "$hip_version" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')"
      DESCRIPTION="Serial + OpenMP + HIP $hip_version, gfx908, hipcc"
      KOKKOS_CXX=$hipcc; KK_CXX=$hipcc
      KOKKOS_EXTRA=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON)
      # rocBLAS only where both Debian (librocblas-dev) and this Kokkos Kernels have it.
      local rocblas=0
      if ! apt-cache policy librocblas-dev 2>/dev/null | grep -qE 'Candidate: [0-9]'; then
        KK_DESCRIPTION="BLAS/LAPACK from OpenBLAS-OpenMP; no rocBLAS: Debian has no librocblas-dev"
      elif ! grep -q 'ADD_TPL_OPTION(ROCBLAS' "$KOKKOS_SRC/kokkos-kernels/cmake/kokkoskernels_tpls.cmake"; then
        KK_DESCRIPTION="BLAS/LAPACK from OpenBLAS-OpenMP; no rocBLAS: Kokkos Kernels $KK_VERSION has no rocBLAS TPL"
      else
        ensure_packages librocblas-dev
        rocblas=1
        KK_EXTRA=(-DKokkosKernels_ENABLE_TPL_ROCBLAS=ON)
        KK_DESCRIPTION="rocBLAS + BLAS/LAPACK from OpenBLAS-OpenMP"
      fi
      STAMP_EXTRA="hipcc=$hip_version"$'\n'"rocblas=$rocblas"
      ;;
  esac
}

# hipcc (Debian's ROCm), and the OpenMP headers and runtime of the clang it drives
# (libomp-<N>-dev: hipcc's own dependencies lack omp.h, which Kokkos' OpenMP backend needs).
ensure_hip_packages() {
  ensure_packages hipcc
  local clang; clang=$(dpkg-query -W -f='${Depends}' hipcc | grep -oE 'clang-[0-9]+' | head -n 1)
  [ -n "$clang" ] || die "cannot tell which clang hipcc uses (dpkg-query -W hipcc)"
  ensure_packages "libomp-${clang#clang-}-dev"
}

main() {
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.lock"
  flock 9  # one bootstrap at a time per cache

  if [ "$FUZZ_PACKAGES_ONLY" -eq 1 ]; then
    local llvm; llvm=$(apt-cache depends clang 2>/dev/null | grep -oE 'clang-[0-9]+' | head -n 1)
    [ -n "$llvm" ] || die "Debian's archive has no clang package"
    ensure_packages clang "libfuzzer-${llvm#clang-}-dev" "libomp-${llvm#clang-}-dev"
    log "fuzzing packages ready"
    return 0
  fi
  if [ "$REPORT_PACKAGES_ONLY" -eq 1 ]; then
    ensure_packages python3 python3-matplotlib python3-numpy python3-numba chromium fonts-dejavu-core
    log "report packages ready"
    return 0
  fi
  ensure_packages "${PACKAGES[@]}"
  [ "$BACKEND" = hip ] && ensure_hip_packages
  [ "$PACKAGES_ONLY" -eq 1 ] && { log "packages ready"; return 0; }
  # Sources already extracted by an earlier run need neither apt lists nor the network.
  SRC_DIR=""
  for d in "$CACHE_ROOT"/src/trilinos-*; do [ -f "$d/.complete" ] && SRC_DIR=$d; done
  if [ -z "$SRC_DIR" ]; then ensure_deb_src; fetch_kokkos_sources; fi

  KOKKOS_VERSION=$(cmake_version_of "$SRC_DIR/kokkos/CMakeLists.txt" Kokkos)
  KK_VERSION=$(cmake_version_of "$SRC_DIR/kokkos-kernels/CMakeLists.txt" KokkosKernels)
  if [ "$PRINT_SOURCES" -eq 1 ]; then
    KOKKOS_SRC=$SRC_DIR
    if [ "$BACKEND" = cuda ]; then ensure_packages patch; prepare_cuda_sources; fi
    echo "$KOKKOS_SRC"
    return 0
  fi
  configure_backend
  local compiler=$COMPILER_KEY
  local key="kokkos-${KOKKOS_VERSION}_kk-${KK_VERSION}_${BACKENDS}_${compiler}"
  local prefix="$CACHE_ROOT/$key"
  [ "$KK_CXX" = INSTALLED_NVCC_WRAPPER ] && KK_CXX="$prefix/bin/nvcc_wrapper"
  local stamp
  stamp=$(printf 'kokkos=%s\nkokkos_kernels=%s\nbackends=%s\ncompiler=%s\nsource=%s\n' \
    "$KOKKOS_VERSION" "$KK_VERSION" "$BACKENDS" "$compiler" "$KOKKOS_SRC")
  [ -n "$STAMP_EXTRA" ] && stamp+=$'\n'"$STAMP_EXTRA"

  # The host prefix only needs its stamp (as it always did); a device prefix also needs the same
  # toolkit and patch it was built with.
  local trusted=0
  if [ -f "$prefix/$STAMP_NAME" ]; then
    if [ "$BACKEND" = host ] || [ "$(cat "$prefix/$STAMP_NAME")" = "$stamp" ]; then trusted=1
    else log "$prefix was built with another toolkit or patch: rebuilding it"
    fi
  fi
  if [ "$trusted" -eq 0 ]; then
    local build="$CACHE_ROOT/build-$key"
    rm -rf "$prefix" "$build"
    mkdir -p "$build"
    build_kokkos "$prefix" "$build"
    printf '%s\n' "$stamp" >"$prefix/$STAMP_NAME"
    rm -rf "$build"
    log "Kokkos + Kokkos Kernels installed in $prefix"
  fi
  [ "$PRINT_PREFIX" -eq 1 ] && echo "$prefix"
  return 0
}

main
