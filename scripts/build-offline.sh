#!/usr/bin/env bash
# Builds Kokkos + Kokkos Kernels and then this project from a bundle of scripts/bundle.sh, with
# no network and no package manager: needs only a C++ compiler, CMake, ninja (or make), Python 3
# and, for CUDA, the CUDA toolkit (nvcc on PATH or in /usr/local/cuda/bin).
#
#   scripts/build-offline.sh BUNDLE [--backend cuda|host] [--arch sm_XX] [--build-dir DIR]
#                            [--jobs N] [--targets T1,T2,...] [--kokkos VERSION]
#                            [--build-type Release|Check] [--host-arch native|CPU]
#
#   BUNDLE       the bundle directory, or its .tar.xz (unpacked into the build directory)
#   --backend    cuda: Serial + OpenMP + CUDA (nvcc_wrapper, cuBLAS); host: Serial + OpenMP.
#                Default: cuda when nvidia-smi sees a GPU, else host.
#   --arch       CUDA architecture, e.g. sm_90 (H100/H200), sm_80 (A100). Default: the first GPU's
#                compute capability (nvidia-smi --query-gpu=compute_cap). Kokkos is configured
#                with the matching Kokkos_ARCH_* option, so nvcc emits machine code for exactly
#                that architecture; sm_90 is Kokkos_ARCH_HOPPER90, which the bundle's patch adds
#                to Kokkos 3.4.01. (An sm_80 build does not run on Hopper: Kokkos 3.4.01 aborts at
#                initialisation when its kernels' compute capability major differs from the
#                device's, which rules out PTX JIT from sm_80.)
#   --kokkos     build against the bundle's second Kokkos release (kokkos-VERSION/, packed by
#                bundle.sh --kokkos-tarball) instead of its Debian 3.4.01
#   --build-dir  default: build-offline-<backend> in this project's directory
#                (build-offline-<backend>-kokkos-VERSION with --kokkos)
#   --jobs       default: every core this process may use (nproc)
#   --targets    build only these targets (default: all)
#   --host-arch  the CPU type the host code is compiled for: native (default: this machine's, with
#                -march=native) or a GCC -march name, for a build here that runs on nodes of
#                another CPU type (gpu-run.sh --prebuilt there): x86-64-v4 runs on every AVX-512
#                x86 CPU, x86-64-v3 on every AVX2 one (GCC 12's sapphirerapids includes
#                avx512_vp2intersect, which Sapphire Rapids lacks: check-prebuilt.sh refuses it there)
#   --build-type the project's: Release (default, -O3) or Check (-O1, on the host a unity build:
#                about half the compile time; for rehearsals of what the bundle provides, such as
#                tests/offline, not for runs)
#
# The project built is the one this script belongs to. Dependencies come from the bundle alone:
# CMake finds yaml-cpp, GoogleTest, Google Benchmark through CMAKE_PREFIX_PATH=BUNDLE/prefix/usr,
# OpenBLAS by its path there, and the binaries find the bundle's shared libraries through their
# run path (DT_RPATH, which also covers OpenBLAS' own Fortran runtime): no LD_LIBRARY_PATH. After
# configuring and building, the script checks that every one of them was found in the bundle.
# The bundle carries no MPI, so the build is without it (MINIAPP_WITH_MPI=OFF) even where the
# machine has one: a binary linked to the build machine's libmpi would not start on a node without it.
# It writes BUILD/offline-build.env (what scripts/gpu-run.sh reads). A second run reuses the
# Kokkos it built when nothing it depends on changed, and rebuilds the project incrementally.
#
# Exit codes: 0 built; 1 a step failed (its log's end is shown); 2 bad arguments.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
START_SECONDS=$SECONDS
log() { printf '[build-offline %3ds] %s\n' "$((SECONDS - START_SECONDS))" "$*" >&2; }
die() { printf '[build-offline] ERROR: %s\n' "$*" >&2; exit 1; }
die_log() {  # log file, message
  printf '[build-offline] ---- last 60 lines of %s ----\n' "$1" >&2
  tail -n 60 "$1" >&2 || true
  die "$2"
}
usage_error() { echo "build-offline: $*" >&2; exit 2; }

BUNDLE=""; BACKEND=""; ARCH=""; BUILD=""; JOBS=$(nproc); TARGETS=""; KOKKOS_RELEASE=""; BUILD_TYPE=Release; HOST_ARCH=native
while [ $# -gt 0 ]; do
  case "$1" in
    --backend|--arch|--build-dir|--jobs|--targets|--kokkos|--build-type|--host-arch)
      [ $# -ge 2 ] || usage_error "$1 needs a value"
      case "$1" in
        --backend) BACKEND=$2 ;; --arch) ARCH=$2 ;; --build-dir) BUILD=$2 ;;
        --jobs) JOBS=$2 ;; --targets) TARGETS=$2 ;; --kokkos) KOKKOS_RELEASE=$2 ;; --build-type) BUILD_TYPE=$2 ;;
        --host-arch) HOST_ARCH=$2 ;;
      esac
      shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    -*) usage_error "unknown option '$1' (try --help)" ;;
    *) [ -z "$BUNDLE" ] || usage_error "more than one bundle given"; BUNDLE=$1 ;;
  esac
  shift
done
[ -n "$BUNDLE" ] || usage_error "no bundle given (usage: build-offline.sh BUNDLE [options]; try --help)"
[ -e "$BUNDLE" ] || usage_error "no bundle '$BUNDLE'"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || usage_error "--jobs needs a positive number, not '$JOBS'"
case "$BUILD_TYPE" in Release|Check) ;; *) usage_error "--build-type is Release or Check, not '$BUILD_TYPE'" ;; esac
[[ "$HOST_ARCH" =~ ^[a-z0-9][a-z0-9_.-]*$ ]] || usage_error "--host-arch needs a CPU type such as native or x86-64-v4, not '$HOST_ARCH'"

for tool in cmake python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
if command -v ninja >/dev/null; then KOKKOS_GENERATOR=Ninja
elif command -v make >/dev/null; then KOKKOS_GENERATOR="Unix Makefiles"
else die "neither ninja nor make is installed"
fi
HOST_CXX=${CXX:-$(command -v g++ || command -v c++ || true)}
[ -n "$HOST_CXX" ] || die "no C++ compiler (g++ or c++ on PATH, or CXX)"
# The instruction-set features the host code may use (a node that runs this build elsewhere must
# have them all: scripts/lib/check-prebuilt.sh), in /proc/cpuinfo's names: for native, this
# machine's; for a named CPU type, what the compiler defines for -march=HOST_ARCH. An unknown CPU
# type fails here, before anything is built.
host_isa() {
  if [ "$HOST_ARCH" = native ]; then
    grep -m 1 '^flags' /proc/cpuinfo | tr ' ' '\n' \
      | grep -E '^(sse[0-9_a-z]*|ssse3|avx[0-9_a-z]*|fma|f16c|bmi[12]|amx[_a-z0-9]*|gfni|vaes|vpclmulqdq|movbe|popcnt|abm|adx|sha_ni)$' \
      | paste -sd' '
    return
  fi
  local macros pair
  macros=$("$HOST_CXX" -march="$HOST_ARCH" -dM -E -x c++ /dev/null 2>&1) \
    || usage_error "--host-arch $HOST_ARCH: $HOST_CXX does not know it ($(echo "$macros" | head -n 1))"
  for pair in SSE:sse SSE2:sse2 SSSE3:ssse3 SSE4_1:sse4_1 SSE4_2:sse4_2 POPCNT:popcnt MOVBE:movbe \
      AVX:avx AVX2:avx2 FMA:fma F16C:f16c BMI:bmi1 BMI2:bmi2 LZCNT:abm ADX:adx SHA:sha_ni \
      AVX512F:avx512f AVX512DQ:avx512dq AVX512CD:avx512cd AVX512BW:avx512bw AVX512VL:avx512vl \
      AVX512IFMA:avx512ifma AVX512VBMI:avx512vbmi AVX512VBMI2:avx512_vbmi2 AVX512VNNI:avx512_vnni \
      AVX512BITALG:avx512_bitalg AVX512VPOPCNTDQ:avx512_vpopcntdq AVX512BF16:avx512_bf16 \
      AVX512FP16:avx512_fp16 AVX512VP2INTERSECT:avx512_vp2intersect AVXVNNI:avx_vnni GFNI:gfni \
      VAES:vaes VPCLMULQDQ:vpclmulqdq AMX_TILE:amx_tile AMX_INT8:amx_int8 AMX_BF16:amx_bf16; do
    if grep -q "^#define __${pair%%:*}__ 1\$" <<<"$macros"; then printf '%s ' "${pair#*:}"; fi
  done
}
BUILD_CPU_ISA=$(host_isa | sed 's/ $//')

find_nvcc() {
  NVCC=$(command -v nvcc 2>/dev/null || true)
  [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
  [ -n "$NVCC" ]
}

if [ -z "$BACKEND" ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then BACKEND=cuda; else BACKEND=host; fi
  log "backend: $BACKEND (chosen by whether nvidia-smi sees a GPU; --backend to choose)"
fi
case "$BACKEND" in
  host) [ -z "$ARCH" ] || usage_error "--arch is for --backend cuda" ;;
  cuda)
    find_nvcc || die "nvcc not found (neither on PATH nor in /usr/local/cuda/bin): install the CUDA toolkit or use --backend host"
    if [ -z "$ARCH" ]; then
      cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ' || true)
      [[ "$cap" =~ ^[0-9]+\.[0-9]+$ ]] || die "cannot read the GPU's compute capability from nvidia-smi: pass --arch sm_XX"
      ARCH="sm_${cap/./}"
      log "GPU compute capability $cap: $ARCH"
    fi
    ;;
  *) usage_error "unknown backend '$BACKEND' (cuda or host)" ;;
esac
# shellcheck source=lib/offline-build-dir.sh
. "$ROOT/scripts/lib/offline-build-dir.sh"
offline_build_dir "$ROOT" "$BACKEND" "$KOKKOS_RELEASE"
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)

# 1. The bundle: a directory, or a tarball unpacked once per tarball content into BUILD/bundle.
if [ -f "$BUNDLE" ]; then
  tarball=$(cd "$(dirname "$BUNDLE")" && pwd)/$(basename "$BUNDLE")
  sum=$(sha256sum "$tarball" | cut -c1-16)
  if [ ! -f "$BUILD/bundle/.unpacked-$sum" ]; then
    log "unpacking $tarball"
    rm -rf "$BUILD/bundle" "$BUILD/bundle.tmp"
    mkdir -p "$BUILD/bundle.tmp"
    tar -xf "$tarball" -C "$BUILD/bundle.tmp" || die "cannot unpack $tarball"
    touch "$BUILD/bundle.tmp/.unpacked-$sum"
    mv "$BUILD/bundle.tmp" "$BUILD/bundle"
  fi
  BUNDLE=$(find "$BUILD/bundle" -mindepth 2 -maxdepth 2 -name MANIFEST -printf '%h\n' | head -n 1)
  [ -n "$BUNDLE" ] || die "$tarball holds no bundle (no */MANIFEST)"
else
  BUNDLE=$(cd "$BUNDLE" && pwd)
fi
[ -f "$BUNDLE/MANIFEST" ] || die "$BUNDLE is not a bundle of scripts/bundle.sh (no MANIFEST)"
manifest() { sed -n "s/^$1=//p" "$BUNDLE/MANIFEST" | head -n 1; }
PREFIX="$BUNDLE/prefix/usr"
LIBDIR="$PREFIX/lib/$(manifest architecture)"
OPENBLAS_DIR="$LIBDIR/openblas-openmp"
[ -f "$BUNDLE/kokkos/CMakeLists.txt" ] && [ -d "$OPENBLAS_DIR" ] || die "$BUNDLE is incomplete (kokkos/ or the OpenBLAS libraries missing)"
KOKKOS_SRC=$BUNDLE
KOKKOS_PATCH=$(manifest kokkos_patch)
KOKKOS_SOURCES=$(manifest kokkos_sources)
if [ -n "$KOKKOS_RELEASE" ]; then
  KOKKOS_SRC="$BUNDLE/kokkos-$KOKKOS_RELEASE"
  [ -f "$KOKKOS_SRC/kokkos/CMakeLists.txt" ] && [ -f "$KOKKOS_SRC/kokkos-kernels/CMakeLists.txt" ] \
    || die "the bundle holds no Kokkos $KOKKOS_RELEASE (bundle.sh --kokkos-tarball kokkos-$KOKKOS_RELEASE.tar.gz --kernels-tarball kokkos-kernels-$KOKKOS_RELEASE.tar.gz packs it; it has: $(manifest extra_kokkos | cut -d' ' -f1))"
  KOKKOS_PATCH=$(manifest extra_kokkos | sed -n 's/^[^ ]* patch=//p')
  KOKKOS_SOURCES="kokkos-$KOKKOS_RELEASE release tarballs"
fi
log "bundle $BUNDLE (project $(manifest project_commit), $KOKKOS_SOURCES, patch $KOKKOS_PATCH)"

# 2. Can this node run what the bundle ships? (Its libraries were built for Debian $(manifest debian).)
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
need=$(manifest needs_glibc)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$need" ] && [ -n "$have" ] && ! version_ge "$have" "$need"; then
  die "this node's glibc is $have; the bundle's libraries (Debian $(manifest debian)) need >= $need"
fi
need=$(manifest needs_glibcxx)
libstdcxx=$("$HOST_CXX" -print-file-name=libstdc++.so.6 2>/dev/null || true)
if [ -n "$need" ] && [ -f "$libstdcxx" ] && ! grep -aq "GLIBCXX_$need" "$libstdcxx"; then
  die "$libstdcxx lacks GLIBCXX_$need, which the bundle's libraries need (a GCC >= 12 libstdc++)"
fi

# 3. Kokkos + Kokkos Kernels, into BUILD/kokkos-<backend>[-<arch>], reused while its stamp matches.
# shellcheck source=lib/kokkos-build.sh
. "$ROOT/scripts/lib/kokkos-build.sh"
KOKKOS_VERSION=$(sed -nE 's/^ *set *\( *Kokkos_VERSION_(MAJOR|MINOR|PATCH) +([0-9]+).*/\2/Ip' "$KOKKOS_SRC/kokkos/CMakeLists.txt" | paste -sd.)
KK_VERSION=$(sed -nE 's/^ *set *\( *KokkosKernels_VERSION_(MAJOR|MINOR|PATCH) +([0-9]+).*/\2/Ip' "$KOKKOS_SRC/kokkos-kernels/CMakeLists.txt" | paste -sd.)
KOKKOS_CXX=$HOST_CXX; KK_CXX=$HOST_CXX; KOKKOS_EXTRA=(); KK_EXTRA=()
DESCRIPTION="Serial + OpenMP, $(basename "$HOST_CXX")"
KK_DESCRIPTION="BLAS/LAPACK from the bundle's OpenBLAS-OpenMP"
key=$BACKEND
stamp="kokkos=$KOKKOS_VERSION kk=$KK_VERSION patch=$KOKKOS_PATCH bundle=$BUNDLE cxx=$HOST_CXX $("$HOST_CXX" -dumpfullversion 2>/dev/null || true)"
if [ "$BACKEND" = cuda ]; then
  arch_option=$(kokkos_cuda_arch_option "$ARCH")
  [ -n "$arch_option" ] || die "no Kokkos architecture for $ARCH (known: sm_70 sm_72 sm_75 sm_80 sm_86 sm_90)"
  grep -qi "KOKKOS_ARCH_OPTION($arch_option " "$KOKKOS_SRC/kokkos/cmake/kokkos_arch.cmake" \
    || die "the bundle's Kokkos has no Kokkos_ARCH_$arch_option (was the CUDA 13 / Hopper patch applied?)"
  PATH="$(dirname "$NVCC"):$PATH"; export PATH  # nvcc_wrapper runs plain `nvcc`
  export NVCC_WRAPPER_DEFAULT_COMPILER=$HOST_CXX CUDA_ROOT=${CUDA_ROOT:-$(dirname "$(dirname "$NVCC")")}
  nvcc_version=$("$NVCC" --version | sed -nE 's/.*release ([0-9]+\.[0-9]+).*/\1/p')
  kokkos_cuda_options "$arch_option"
  key="cuda-$ARCH"
  DESCRIPTION="Serial + OpenMP + CUDA $nvcc_version, $ARCH (Kokkos_ARCH_$arch_option), nvcc_wrapper"
  KK_DESCRIPTION="cuBLAS + $KK_DESCRIPTION, no cuSPARSE"
  KOKKOS_CXX="$KOKKOS_SRC/kokkos/bin/nvcc_wrapper"
  KK_CXX="$BUILD/kokkos-$key/bin/nvcc_wrapper"  # installed by the Kokkos step
  stamp+=" nvcc=$NVCC $nvcc_version arch=$ARCH"
fi
KOKKOS_PREFIX="$BUILD/kokkos-$key"
if [ ! -f "$KOKKOS_PREFIX/.offline-build-complete" ] || [ "$(cat "$KOKKOS_PREFIX/.offline-build-complete")" != "$stamp" ]; then
  rm -rf "$KOKKOS_PREFIX" "$BUILD/kokkos-build-$key"
  mkdir -p "$BUILD/kokkos-build-$key"
  t0=$SECONDS
  build_kokkos "$KOKKOS_PREFIX" "$BUILD/kokkos-build-$key"
  echo "$stamp" >"$KOKKOS_PREFIX/.offline-build-complete"
  rm -rf "$BUILD/kokkos-build-$key"
  log "Kokkos + Kokkos Kernels built in $((SECONDS - t0)) s"
else
  log "Kokkos + Kokkos Kernels: $KOKKOS_PREFIX (already built from this bundle)"
fi

# 4. The project.
PROJECT_BUILD="$BUILD/project"
commit=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || true)
if [ -n "$commit" ] && [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit+="-dirty"; fi
[ -z "$commit" ] && [ -f "$ROOT/.miniapp-source-commit" ] && commit=$(cat "$ROOT/.miniapp-source-commit")
project_cxx=$HOST_CXX
[ "$BACKEND" = cuda ] && project_cxx="$KOKKOS_PREFIX/bin/nvcc_wrapper"
# DT_RPATH (--disable-new-dtags), not RUNPATH: it is also searched for the libraries' own
# dependencies (OpenBLAS -> libgfortran), so nothing needs LD_LIBRARY_PATH.
link_flags="-Wl,--disable-new-dtags -Wl,-rpath,$LIBDIR -Wl,-rpath,$OPENBLAS_DIR"
generator_args=(-G "$KOKKOS_GENERATOR")
host_arch_args=(-DMINIAPP_NATIVE_ARCH=ON)
[ "$HOST_ARCH" = native ] || host_arch_args=(-DMINIAPP_NATIVE_ARCH=OFF -DMINIAPP_HOST_MARCH="$HOST_ARCH")
configure_args=(-DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCMAKE_CXX_FLAGS_CHECK=-O1 -DCMAKE_CXX_COMPILER="$project_cxx"
  -DKokkos_ROOT="$KOKKOS_PREFIX" -DKokkosKernels_ROOT="$KOKKOS_PREFIX" -DCMAKE_PREFIX_PATH="$PREFIX"
  -DMINIAPP_HOST_BLAS_LIBRARY="$OPENBLAS_DIR/libopenblas.so" "${host_arch_args[@]}" -DMINIAPP_WITH_MPI=OFF
  -DCMAKE_EXE_LINKER_FLAGS="$link_flags")
# Check on the host merges up to 8 sources of a target into one unit (CMake's unity build, as the
# compile checks build): each unit parses Kokkos' headers once, most of the time of the units
# that launch no kernel. Not for CUDA: its rehearsal (tests/offline) builds one object by name,
# which a unity build would merge away, and few units besides.
if [ "$BUILD_TYPE" = Check ] && [ "$BACKEND" = host ]; then configure_args+=(-DCMAKE_UNITY_BUILD:BOOL=ON); fi
configured="$PROJECT_BUILD/.offline-configure-args"
if [ ! -f "$PROJECT_BUILD/CMakeCache.txt" ] || [ "$(cat "$configured" 2>/dev/null)" != "${configure_args[*]}" ]; then
  log "configuring the project ($ROOT) in $PROJECT_BUILD"
  rm -rf "$PROJECT_BUILD"
  mkdir -p "$PROJECT_BUILD"
  cmake -S "$ROOT" -B "$PROJECT_BUILD" "${generator_args[@]}" "${configure_args[@]}" \
    -DMINIAPP_GIT_COMMIT="${commit:-unknown}" >"$BUILD/project-configure.log" 2>&1 \
    || { rm -f "$PROJECT_BUILD/CMakeCache.txt"; die_log "$BUILD/project-configure.log" "configuring the project failed"; }
  printf '%s' "${configure_args[*]}" >"$configured"
elif ! grep -qxF "MINIAPP_GIT_COMMIT:UNINITIALIZED=${commit:-unknown}" "$PROJECT_BUILD/CMakeCache.txt"; then
  # Another commit: the results' provenance must name it (its objects are rebuilt, Kokkos is not).
  cmake "$PROJECT_BUILD" -DMINIAPP_GIT_COMMIT="${commit:-unknown}" >"$BUILD/project-configure.log" 2>&1 \
    || die_log "$BUILD/project-configure.log" "reconfiguring the project for commit ${commit:-unknown} failed"
fi

# Every dependency CMake found must lie in the bundle (or the Kokkos built from it).
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$PROJECT_BUILD/CMakeCache.txt" | head -n 1; }
inside() { case "$1" in "$2"/*) return 0 ;; *) return 1 ;; esac; }
for var in yaml-cpp_DIR GTest_DIR benchmark_DIR MINIAPP_HOST_BLAS_LIBRARY; do
  value=$(cache_value "$var")
  inside "$value" "$PREFIX" || die "CMake took $var from '$value', not from the bundle ($PREFIX)"
done
for var in Kokkos_DIR KokkosKernels_DIR; do
  value=$(cache_value "$var")
  inside "$value" "$KOKKOS_PREFIX" || die "CMake took $var from '$value', not from $KOKKOS_PREFIX"
done
grep -rq "$OPENBLAS_DIR" "$KOKKOS_PREFIX"/lib*/cmake/KokkosKernels/ \
  || die "Kokkos Kernels' BLAS/LAPACK is not the bundle's OpenBLAS ($OPENBLAS_DIR)"

target_args=()
if [ -n "$TARGETS" ]; then IFS=, read -r -a target_list <<<"$TARGETS"; target_args=(--target "${target_list[@]}"); fi
log "building the project (${TARGETS:-all targets}, $JOBS jobs)"
t0=$SECONDS
cmake --build "$PROJECT_BUILD" --parallel "$JOBS" "${target_args[@]}" >"$BUILD/project-build.log" 2>&1 \
  || die_log "$BUILD/project-build.log" "building the project failed"
log "project built in $((SECONDS - t0)) s"

# A CUDA build's host spaces go through nvcc too: a lambda wrapper shared between two objects
# crashes them at run time (scripts/lib/check-lambda-wrappers.sh), so it fails here, off the GPU.
# CI's compile check covers the device space's tests only; this build has every space's.
if [ "$BACKEND" = cuda ]; then
  "$ROOT/scripts/lib/check-lambda-wrappers.sh" "$PROJECT_BUILD" >"$BUILD/lambda-wrappers.log" 2>&1 \
    || die_log "$BUILD/lambda-wrappers.log" "the build shares a __host__ __device__ lambda wrapper between object files"
fi
# GCC at AVX-512 emits aligned vector moves on misaligned stack arrays (a SIGSEGV in the host
# tests of a CUDA build at x86-64-v4): CMakeLists.txt has the assembler write them unaligned,
# and none may be left in the project's objects (scripts/lib/check-vector-moves.sh).
if [ "$(cache_value MINIAPP_UNALIGNED_VECTOR_MOVES)" = ON ]; then
  "$ROOT/scripts/lib/check-vector-moves.sh" "$PROJECT_BUILD" >"$BUILD/vector-moves.log" 2>&1 \
    || die_log "$BUILD/vector-moves.log" "the project's objects hold aligned vector moves"
fi

# The binaries must load the bundle's libraries, whatever the node has installed.
for exe in "$PROJECT_BUILD"/bin/* "$PROJECT_BUILD"/tests/miniapp_unit_tests; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  ldd "$exe" >"$BUILD/ldd.txt" 2>&1 || die_log "$BUILD/ldd.txt" "ldd $exe failed"
  # libcuda.so.1 comes with the NVIDIA driver: a machine without a GPU (a login node building for
  # the GPU nodes) has none, and the GPU node's is the one that counts (check-prebuilt.sh there).
  if grep 'not found' "$BUILD/ldd.txt" | grep -qv '^[[:space:]]*libcuda\.so\.1 '; then
    die_log "$BUILD/ldd.txt" "$exe misses shared libraries"
  fi
  while read -r lib path; do
    inside "$path" "$BUNDLE/prefix" || die "$exe loads $lib from $path, not from the bundle"
  done < <(awk '$1 ~ /^lib(yaml-cpp|benchmark|openblas|blas|lapack|gfortran|quadmath)/ {print $1, $3}' "$BUILD/ldd.txt")
done

{
  echo "BUNDLE=$BUNDLE"
  echo "BACKEND=$BACKEND"
  echo "ARCH=$ARCH"
  echo "KOKKOS_PREFIX=$KOKKOS_PREFIX"
  echo "PROJECT_BUILD=$PROJECT_BUILD"
  echo "PROJECT_COMMIT=${commit:-unknown}"
  echo "BUNDLE_PROJECT_COMMIT=$(manifest project_commit)"
  echo "NVCC=${NVCC:-}"
  echo "KOKKOS_DESCRIPTION=\"$DESCRIPTION\""
  echo "KOKKOS_VERSION=$KOKKOS_VERSION"
  echo "KOKKOS_KERNELS_VERSION=$KK_VERSION"
  echo "JOBS=$JOBS"
  echo "BUILD_HOST=$(hostname)"
  # The host code's CPU type and the instruction-set features it may use (host_isa above).
  echo "BUILD_HOST_ARCH=$HOST_ARCH"
  echo "BUILD_CPU_ISA=\"$BUILD_CPU_ISA\""
  echo "BUILD_SECONDS=$((SECONDS - START_SECONDS))"
} >"$BUILD/offline-build.env"
log "done: ${TARGETS:-all targets} in $PROJECT_BUILD ($DESCRIPTION); settings in $BUILD/offline-build.env"
