# Builds and installs Kokkos + Kokkos Kernels with the options every build of the project uses.
# Sourced by scripts/bootstrap-debian.sh (Debian, with apt) and scripts/build-offline.sh (from a
# bundle, no network); the caller defines log and die_log (file, message) and these variables:
#   KOKKOS_SRC      directory holding kokkos/ and kokkos-kernels/
#   KOKKOS_VERSION, KK_VERSION, DESCRIPTION, KK_DESCRIPTION   for the log
#   KOKKOS_CXX, KK_CXX          compilers (empty: CMake's default)
#   KOKKOS_EXTRA, KK_EXTRA      arrays of extra cmake options (backend, architecture, TPLs)
#   OPENBLAS_DIR    directory of libopenblas.so (OpenBLAS-OpenMP: BLAS and LAPACK)
#   JOBS            parallel build jobs
#   KOKKOS_GENERATOR    CMake generator (default Ninja)

# Kokkos reads the Cuda architecture from one Kokkos_ARCH_* option; these are the ones the
# patched Kokkos 3.4.01 knows from Volta on (CUDA 13 dropped everything older than sm_75 anyway).
kokkos_cuda_arch_option() {  # sm_XX -> VOLTA70 ... HOPPER90; empty when unknown
  case "$1" in
    sm_70) echo VOLTA70 ;; sm_72) echo VOLTA72 ;; sm_75) echo TURING75 ;;
    sm_80) echo AMPERE80 ;; sm_86) echo AMPERE86 ;; sm_90) echo HOPPER90 ;;
    *) echo "" ;;
  esac
}

# Sets KOKKOS_EXTRA and KK_EXTRA for Serial + OpenMP + CUDA on the Kokkos architecture $1.
kokkos_cuda_options() {
  KOKKOS_EXTRA=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$1=ON")
  # cuSPARSE off: Kokkos Kernels 3.4's cuSPARSE calls use enums CUDA 12 removed (dense
  # workloads only here); cuBLAS works as shipped.
  KK_EXTRA=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF)
  # Kokkos Kernels 4 turns its cuSOLVER TPL on with CUDA, and refuses it without cuSPARSE: off as
  # well (the solver's dense-vendor variant calls cuSOLVER itself).
  case "${KK_VERSION:-}" in 3.*|"") ;; *) KK_EXTRA+=(-DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF) ;; esac
}

build_kokkos() {  # prefix, build directory
  local prefix=$1 build=$2
  local -a kokkos_cxx=() kk_cxx=()
  [ -n "$KOKKOS_CXX" ] && kokkos_cxx=(-DCMAKE_CXX_COMPILER="$KOKKOS_CXX")
  [ -n "$KK_CXX" ] && kk_cxx=(-DCMAKE_CXX_COMPILER="$KK_CXX")
  log "building Kokkos $KOKKOS_VERSION ($DESCRIPTION) -> $prefix"
  local generator=${KOKKOS_GENERATOR:-Ninja}
  cmake -S "$KOKKOS_SRC/kokkos" -B "$build/kokkos" -G "$generator" "${kokkos_cxx[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF \
    "${KOKKOS_EXTRA[@]}" \
    >"$build/kokkos-configure.log" 2>&1 || die_log "$build/kokkos-configure.log" "configuring Kokkos failed; see $build/kokkos-configure.log"
  cmake --build "$build/kokkos" --parallel "$JOBS" --target install >"$build/kokkos-build.log" 2>&1 \
    || die_log "$build/kokkos-build.log" "building Kokkos failed; see $build/kokkos-build.log"

  # ETI off: templates are instantiated in the mini-app, which keeps this step to seconds.
  log "building Kokkos Kernels $KK_VERSION (ETI off, $KK_DESCRIPTION) -> $prefix"
  local -a eti_off=()
  for opt in INST_DOUBLE INST_FLOAT INST_OFFSET_INT INST_OFFSET_SIZE_T INST_ORDINAL_INT \
             INST_LAYOUTLEFT INST_LAYOUTRIGHT INST_COMPLEX_DOUBLE INST_COMPLEX_FLOAT; do
    eti_off+=("-DKokkosKernels_${opt}=OFF")
  done
  cmake -S "$KOKKOS_SRC/kokkos-kernels" -B "$build/kokkos-kernels" -G "$generator" "${kk_cxx[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" \
    "${eti_off[@]}" -DKokkosKernels_ENABLE_TESTS=OFF \
    -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON \
    -DBLAS_LIBRARIES=openblas -DBLAS_LIBRARY_DIRS="$OPENBLAS_DIR" \
    -DLAPACK_LIBRARIES=openblas -DLAPACK_LIBRARY_DIRS="$OPENBLAS_DIR" \
    "-DF77_BLAS_MANGLE=(name,NAME) name ## _" "${KK_EXTRA[@]}" \
    >"$build/kk-configure.log" 2>&1 || die_log "$build/kk-configure.log" "configuring Kokkos Kernels failed; see $build/kk-configure.log"
  cmake --build "$build/kokkos-kernels" --parallel "$JOBS" --target install >"$build/kk-build.log" 2>&1 \
    || die_log "$build/kk-build.log" "building Kokkos Kernels failed; see $build/kk-build.log"
}
