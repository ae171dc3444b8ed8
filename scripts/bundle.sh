#!/usr/bin/env bash
# Packs everything a build of the mini-app needs that a bare CUDA node lacks, for machines with
# no network and no package manager (run it where the Debian archive is reachable):
#
#   scripts/bundle.sh [--tar] [--kokkos-tarball F --kernels-tarball F] [OUT]
#                                          (OUT default: build-bundle/miniapp-offline)
#
#   OUT/kokkos, OUT/kokkos-kernels   Kokkos + Kokkos Kernels 3.4.01 from Debian's trilinos source
#                                    package, with scripts/patches/kokkos-3.4.01-cuda13.patch
#                                    (CUDA 13, Kokkos_ARCH_HOPPER90)
#   OUT/kokkos-V/{kokkos,kokkos-kernels}
#                                    with --kokkos-tarball kokkos-V.tar.gz and --kernels-tarball
#                                    kokkos-kernels-V.tar.gz: a second, current release pair that
#                                    you supply (the release tarballs as downloaded; each is checked
#                                    against the sha256 in scripts/lib/kokkos-releases.tsv, and never
#                                    downloaded by this script), with scripts/patches/kokkos-V-cuda13.patch
#                                    where one exists; build-offline.sh --kokkos V builds it
#   OUT/prefix/usr                   Debian packages unpacked (dpkg-deb -x): yaml-cpp, GoogleTest,
#                                    Google Benchmark, OpenBLAS-OpenMP (BLAS + LAPACK) and the
#                                    runtime libraries they need that a compiler does not bring
#   OUT/project                      this checkout (tracked and untracked, not ignored, files)
#   OUT/MANIFEST                     what is inside: versions, package hashes, the commit, and the
#                                    newest glibc / libstdc++ symbol versions the libraries need
#
# With --tar, also OUT.tar.xz (what to copy to the node). Then on the node, no network needed:
#   scripts/build-offline.sh OUT[.tar.xz] [--backend cuda|host] [--arch sm_XX]
#
# Exit codes: 0 done; 1 a step failed (its message says which); 2 bad arguments; 3 the Debian
# archive could not be reached (apt-get update or download failed).
# Environment: MINIAPP_CACHE (cache root: the trilinos sources and downloaded .debs are kept there).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
START_SECONDS=$SECONDS

# The project's build dependencies (scripts/bootstrap-debian.sh installs the same ones). Each
# pulls in the packages it pins to its own version (its shared library, GoogleTest's sources).
readonly DEV_PACKAGES=(libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev libopenblas-openmp-dev)
# OpenBLAS' LAPACK is Fortran: its runtime, which a CUDA node with only a C++ compiler may lack.
# libgomp1 is left out on purpose: the node's compiler brings its own OpenMP runtime, and an
# older copy ahead of it on the run path would break the binaries it compiles.
readonly RUNTIME_PACKAGES=(libgfortran5 libquadmath0)

log() { printf '[bundle %3ds] %s\n' "$((SECONDS - START_SECONDS))" "$*" >&2; }
die() { printf '[bundle] ERROR: %s\n' "$*" >&2; exit 1; }
unreachable() { printf '[bundle] ERROR: %s\n' "$*" >&2; exit 3; }

TAR=0
OUT=""
KOKKOS_TARBALL=""; KERNELS_TARBALL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tar) TAR=1 ;;
    --kokkos-tarball|--kernels-tarball)
      [ $# -ge 2 ] || { echo "bundle: $1 needs a file" >&2; exit 2; }
      [ -f "$2" ] || { echo "bundle: no file '$2' for $1" >&2; exit 2; }
      if [ "$1" = --kokkos-tarball ]; then KOKKOS_TARBALL=$2; else KERNELS_TARBALL=$2; fi
      shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    -*) echo "bundle: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) [ -z "$OUT" ] || { echo "bundle: more than one output given" >&2; exit 2; }; OUT=$1 ;;
  esac
  shift
done
if { [ -n "$KOKKOS_TARBALL" ] && [ -z "$KERNELS_TARBALL" ]; } || { [ -z "$KOKKOS_TARBALL" ] && [ -n "$KERNELS_TARBALL" ]; }; then
  echo "bundle: --kokkos-tarball and --kernels-tarball go together (one release pair)" >&2; exit 2
fi
# The release version V of a tarball named <stem>-V.tar.gz (fails on any other name).
release_version() {  # file, stem
  local base; base=$(basename "$1")
  [[ "$base" =~ ^$2-([0-9]+\.[0-9]+\.[0-9]+)\.tar\.gz$ ]] || return 1
  echo "${BASH_REMATCH[1]}"
}
EXTRA_VERSION=""
if [ -n "$KOKKOS_TARBALL" ]; then
  EXTRA_VERSION=$(release_version "$KOKKOS_TARBALL" kokkos) \
    || { echo "bundle: --kokkos-tarball wants a release tarball named kokkos-X.Y.ZZ.tar.gz, not '$(basename "$KOKKOS_TARBALL")'" >&2; exit 2; }
  kernels_version=$(release_version "$KERNELS_TARBALL" kokkos-kernels) \
    || { echo "bundle: --kernels-tarball wants kokkos-kernels-X.Y.ZZ.tar.gz, not '$(basename "$KERNELS_TARBALL")'" >&2; exit 2; }
  [ "$kernels_version" = "$EXTRA_VERSION" ] \
    || { echo "bundle: Kokkos $EXTRA_VERSION and Kokkos Kernels $kernels_version are not one release pair" >&2; exit 2; }
  for f in "$KOKKOS_TARBALL" "$KERNELS_TARBALL"; do
    known=$(awk -F'\t' -v f="$(basename "$f")" '$1 == f {print $2}' "$ROOT/scripts/lib/kokkos-releases.tsv")
    [ -n "$known" ] || { echo "bundle: $(basename "$f") is not a release scripts/lib/kokkos-releases.tsv knows" >&2; exit 2; }
    [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$known" ] \
      || { echo "bundle: $f does not match the published sha256 of $(basename "$f") ($known)" >&2; exit 2; }
  done
fi
OUT=${OUT:-$ROOT/build-bundle/miniapp-offline}
mkdir -p "$(dirname "$OUT")"
OUT="$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")"
command -v dpkg-deb >/dev/null && command -v apt-get >/dev/null || die "needs apt-get and dpkg-deb (Debian)"
git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1 || die "$ROOT is not a git checkout (the project files are taken from git)"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else return 1
  fi
}

# Candidate version's fields of a package (apt lists refreshed once if it is unknown).
APT_UPDATED=0
declare -A PACKAGE_INFO=()
# Call load_package_info in this shell (not in $(...)) first, so that the answer is kept.
load_package_info() {  # package
  if [ -z "${PACKAGE_INFO[$1]:-}" ]; then
    local out
    out=$(apt-cache show --no-all-versions "$1" 2>/dev/null || true)
    if [ -z "$out" ] && [ "$APT_UPDATED" -eq 0 ]; then
      log "apt knows no $1: apt-get update"
      as_root apt-get update -q >"$CACHE_ROOT/apt-update.log" 2>&1 \
        || unreachable "apt-get update failed (is the Debian archive reachable?); see $CACHE_ROOT/apt-update.log"
      APT_UPDATED=1
      out=$(apt-cache show --no-all-versions "$1" 2>/dev/null || true)
    fi
    [ -n "$out" ] || die "the Debian archive has no package $1"
    PACKAGE_INFO[$1]=$out
  fi
}
package_field() {  # package, field
  load_package_info "$1"
  printf '%s\n' "${PACKAGE_INFO[$1]}" | sed -n "s/^$2: //p" | head -n 1
}

# The packages to bundle: the dev packages, what they pin to their own version (= V), recursively,
# and the runtime packages.
resolve_packages() {
  local -a todo=("${DEV_PACKAGES[@]}" "${RUNTIME_PACKAGES[@]}")
  PACKAGES=()
  while [ ${#todo[@]} -gt 0 ]; do
    local p=${todo[0]}; todo=("${todo[@]:1}")
    [[ " ${PACKAGES[*]} " == *" $p "* ]] && continue
    PACKAGES+=("$p")
    load_package_info "$p"
    local dep
    for dep in $(package_field "$p" Depends | tr ',' '\n' | sed -nE 's/^ *([a-z0-9.+-]+) \(= [^)]*\).*/\1/p'); do
      todo+=("$dep")
    done
  done
}

# Downloads each package's candidate .deb into the cache (kept; checked against the archive's
# SHA256 on every use) and sets DEBS.
download_packages() {
  local dir="$CACHE_ROOT/debs"
  mkdir -p "$dir"
  DEBS=()
  local -a missing=() files=() shas=()
  local p i
  for p in "${PACKAGES[@]}"; do
    local file sha
    file=$(basename "$(package_field "$p" Filename)")
    sha=$(package_field "$p" SHA256)
    files+=("$file"); shas+=("$sha")
    if [ ! -f "$dir/$file" ] || [ "$(sha256sum "$dir/$file" | cut -d' ' -f1)" != "$sha" ]; then
      rm -f "$dir/$file"
      missing+=("$p=$(package_field "$p" Version)")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "downloading ${missing[*]}"
    (cd "$dir" && apt-get download -q "${missing[@]}" >>"$dir/download.log" 2>&1) \
      || unreachable "apt-get download failed (is the Debian archive reachable?); see $dir/download.log"
  fi
  for i in "${!files[@]}"; do
    [ "$(sha256sum "$dir/${files[$i]}" | cut -d' ' -f1)" = "${shas[$i]}" ] \
      || die "${files[$i]} does not match the archive's SHA256"
    DEBS+=("$dir/${files[$i]}")
  done
}

# The newest symbol version of each prefix (GLIBC_, GLIBCXX_) that the bundle's libraries need:
# the node's C and C++ runtimes must provide it.
needed_symbol_version() {  # directory, prefix
  find "$1" -name '*.so*' -type f -print0 | xargs -0 -r objdump -T 2>/dev/null \
    | grep -oE "\\b$2[0-9.]+\\b" | sed "s/^$2//" | sort -V | tail -n 1
}

main() {
  mkdir -p "$CACHE_ROOT"
  local tmp="$OUT.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp"

  log "Kokkos sources (Debian's trilinos source package, CUDA 13 patch)"
  local src
  src=$("$ROOT/scripts/bootstrap-debian.sh" --backend cuda --print-sources) \
    || die "scripts/bootstrap-debian.sh --print-sources failed (its output is above)"
  [ -f "$src/kokkos/CMakeLists.txt" ] && [ -f "$src/kokkos-kernels/CMakeLists.txt" ] \
    || die "$src holds no kokkos/ and kokkos-kernels/"
  cp -a "$src/kokkos" "$src/kokkos-kernels" "$tmp/"
  local extra_patch=none
  if [ -n "$EXTRA_VERSION" ]; then
    log "Kokkos + Kokkos Kernels $EXTRA_VERSION from the release tarballs given (sha256 checked)"
    local extra="$tmp/kokkos-$EXTRA_VERSION"
    mkdir -p "$extra"
    tar -xzf "$KOKKOS_TARBALL" -C "$extra" && mv "$extra/kokkos-$EXTRA_VERSION" "$extra/kokkos" \
      || die "unpacking $KOKKOS_TARBALL failed (a release tarball holds kokkos-$EXTRA_VERSION/)"
    tar -xzf "$KERNELS_TARBALL" -C "$extra" && mv "$extra/kokkos-kernels-$EXTRA_VERSION" "$extra/kokkos-kernels" \
      || die "unpacking $KERNELS_TARBALL failed (a release tarball holds kokkos-kernels-$EXTRA_VERSION/)"
    local patch_file="$ROOT/scripts/patches/kokkos-$EXTRA_VERSION-cuda13.patch"
    if [ -f "$patch_file" ]; then
      (cd "$extra" && patch -p1 --quiet <"$patch_file") || die "$patch_file does not apply to Kokkos $EXTRA_VERSION"
      extra_patch="$(basename "$patch_file") sha256:$(sha256sum "$patch_file" | cut -c1-16)"
    else
      log "no scripts/patches/kokkos-$EXTRA_VERSION-cuda13.patch: Kokkos $EXTRA_VERSION is bundled as released"
    fi
  fi

  resolve_packages
  log "Debian packages: ${PACKAGES[*]}"
  download_packages
  local deb
  for deb in "${DEBS[@]}"; do
    dpkg-deb -x "$deb" "$tmp/prefix" || die "dpkg-deb -x $deb failed"
  done
  # Not needed to build or run: documentation, and OpenBLAS' static libraries (57 MB; the
  # project and Kokkos Kernels link the shared one).
  rm -rf "$tmp/prefix/usr/share/doc" "$tmp/prefix/usr/share/lintian"
  find "$tmp/prefix" -path '*/openblas-openmp/*.a' -delete
  local lib="$tmp/prefix/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)"
  [ -e "$lib/openblas-openmp/libopenblas.so" ] || die "the packages brought no openblas-openmp/libopenblas.so"
  for f in libyaml-cpp.so libbenchmark.so libgtest.a libgfortran.so.5; do
    [ -e "$lib/$f" ] || die "the packages brought no $f"
  done

  log "project files of $ROOT"
  mkdir -p "$tmp/project"
  (cd "$ROOT" && git ls-files -z -c -o --exclude-standard | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
     | tar --null -T - -cf -) | tar -xf - -C "$tmp/project" || die "copying the project files failed"
  local commit dirty=""
  commit=$(git -C "$ROOT" rev-parse --short=12 HEAD)
  [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] && dirty="-dirty"
  # The copy has no .git: CMake reads its commit from here (build-offline.sh passes it on).
  echo "$commit$dirty" >"$tmp/project/.miniapp-source-commit"

  local glibc glibcxx
  glibc=$(needed_symbol_version "$tmp/prefix" GLIBC_)
  glibcxx=$(needed_symbol_version "$tmp/prefix" GLIBCXX_)
  {
    echo "bundle=kokkos-miniapp offline build bundle"
    echo "created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "debian=$(cat /etc/debian_version 2>/dev/null || echo unknown)"
    echo "architecture=$(basename "$lib")"
    echo "kokkos_sources=$(basename "$src")"
    echo "kokkos_patch=$(cat "$src/.complete" 2>/dev/null || echo none)"
    [ -n "$EXTRA_VERSION" ] && echo "extra_kokkos=$EXTRA_VERSION patch=$extra_patch"
    echo "project_commit=$commit$dirty"
    echo "needs_glibc=$glibc"
    echo "needs_glibcxx=$glibcxx"
    for deb in "${DEBS[@]}"; do
      echo "package=$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) sha256:$(sha256sum "$deb" | cut -c1-64)"
    done
  } >"$tmp/MANIFEST"

  rm -rf "$OUT"
  mv "$tmp" "$OUT"
  log "bundle: $OUT ($(du -sh "$OUT" | cut -f1)); needs glibc >= $glibc, libstdc++ with GLIBCXX_$glibcxx"
  if [ "$TAR" -eq 1 ]; then
    log "compressing $OUT.tar.xz"
    rm -f "$OUT.tar.xz"
    tar -C "$(dirname "$OUT")" -cf - "$(basename "$OUT")" | xz -T0 -6 >"$OUT.tar.xz.tmp" \
      || die "writing $OUT.tar.xz failed"
    mv "$OUT.tar.xz.tmp" "$OUT.tar.xz"
    log "tarball: $OUT.tar.xz ($(du -h "$OUT.tar.xz" | cut -f1))"
  fi
}

main
