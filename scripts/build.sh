#!/usr/bin/env bash
# Installs and builds whatever is missing, then builds the mini-app incrementally.
#
#   scripts/build.sh
#
# With Kokkos_ROOT (and KokkosKernels_ROOT) set in the environment, that Kokkos is used and no
# bootstrap happens (Spack, modules). Otherwise scripts/bootstrap-debian.sh provides a cached
# Kokkos + Kokkos Kernels built from Debian's trilinos source package.
#
# Environment: MINIAPP_BUILD_DIR (default: build), MINIAPP_BUILD_TYPE (default: Release),
# MINIAPP_JOBS (default: nproc), MINIAPP_NATIVE_ARCH (default: ON; OFF when the binary must run on
# another CPU type than the one building it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${MINIAPP_BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${MINIAPP_BUILD_TYPE:-Release}
JOBS=${MINIAPP_JOBS:-$(nproc)}
NATIVE=${MINIAPP_NATIVE_ARCH:-ON}

if [ -n "${Kokkos_ROOT:-}" ]; then
  KOKKOS_PREFIX=$Kokkos_ROOT
  KK_PREFIX=${KokkosKernels_ROOT:-$Kokkos_ROOT}
  EXPECT_BLAS=OFF
else
  KOKKOS_PREFIX=$("$ROOT/scripts/bootstrap-debian.sh" --print-prefix)
  KK_PREFIX=$KOKKOS_PREFIX
  # The bootstrap builds Kokkos Kernels with OpenBLAS: the test that gemm reaches it must run, not skip.
  EXPECT_BLAS=ON
fi

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

# Configure only when there is no build tree yet or it was made for another Kokkos.
cache="$BUILD_DIR/CMakeCache.txt"
if [ ! -f "$cache" ] || ! grep -qx "Kokkos_ROOT:[A-Z]*=$KOKKOS_PREFIX" "$cache"; then
  echo "[build] configuring $BUILD_DIR against Kokkos in $KOKKOS_PREFIX" >&2
  rm -rf "$BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DKokkos_ROOT="$KOKKOS_PREFIX" -DKokkosKernels_ROOT="$KK_PREFIX" -DMINIAPP_NATIVE_ARCH="$NATIVE" \
    -DMINIAPP_EXPECT_VENDOR_BLAS="$EXPECT_BLAS" \
    >"$ROOT/.configure.log" 2>&1 \
    || { cat "$ROOT/.configure.log" >&2; echo "[build] ERROR: configuring failed" >&2; exit 1; }
elif ! grep -qx "MINIAPP_NATIVE_ARCH:BOOL=$NATIVE" "$cache" \
     || ! grep -qx "MINIAPP_EXPECT_VENDOR_BLAS:BOOL=$EXPECT_BLAS" "$cache"; then
  cmake "$BUILD_DIR" -DMINIAPP_NATIVE_ARCH="$NATIVE" -DMINIAPP_EXPECT_VENDOR_BLAS="$EXPECT_BLAS" \
    >"$ROOT/.configure.log" 2>&1 \
    || { cat "$ROOT/.configure.log" >&2; echo "[build] ERROR: configuring failed" >&2; exit 1; }
fi
echo "[build] building in $BUILD_DIR" >&2
cmake --build "$BUILD_DIR" --parallel "$JOBS" >&2
