#!/usr/bin/env bash
# Rehearses the build of a GPU node without network (issue 18) on this machine: makes the bundle
# (scripts/bundle.sh, which needs the Debian archive), then runs the bundle's own copy of
# scripts/build-offline.sh in a network namespace with no network (unshare --net: only a loopback
# interface, down) and a mount namespace in which every file of the Debian packages the bundle
# replaces (and of any other BLAS/LAPACK) is hidden from /usr by an overlay of whiteouts, so only
# the bundle can satisfy them. The machine's own /usr is not touched.
#
#   check_offline_build.sh host|cuda SOURCE_DIR
#
#   host: Kokkos (Serial + OpenMP) + Kokkos Kernels from the bundle, then the mini-app, its e2e
#         suite and the job subcommands' tests, which then run in the same namespace (e2e, and
#         every unit ctest but the unit-test binary's: unit.jobs, unit.kokkos-tools, the scripts';
#         not unit.<space>, unit.common, unit.crash-report).
#   cuda: Kokkos (Serial + OpenMP + CUDA, sm_90: Kokkos_ARCH_HOPPER90 from the bundle's patch) +
#         Kokkos Kernels with cuBLAS, the project configured against them with nvcc_wrapper, and
#         the parts that prove the CUDA link and code generation: the e2e test binary (GoogleTest +
#         yaml-cpp from the bundle through nvcc_wrapper's link line) and the solver workload's
#         object (Kokkos kernels for Serial, OpenMP and CUDA), whose fat binary must hold sm_90
#         machine code and nothing for other architectures (read by fatbin_archs.py: this
#         machine's toolkit has no cuobjdump). The whole project's CUDA compile is device.cuda-compile's job (same patched
#         Kokkos sources, sm_80); nothing can run here without a GPU.
#
# Prints "skipped: <why>" (ctest: skipped) only where the rehearsal is impossible: not root, no
# unshare or overlayfs, no nvcc (cuda), or the Debian archive unreachable while the packages are
# not cached. Every other problem fails (exit 1) with the step's output.
#
# Work directory (kept, so a second run reuses Kokkos and rebuilds incrementally):
#   $MINIAPP_CACHE/offline-check/<hash of SOURCE_DIR>/{bundle,build-host,build-cuda,hide}
# Environment: MINIAPP_CACHE, MINIAPP_JOBS (default: nproc).
set -uo pipefail

BACKEND=${1:?usage: check_offline_build.sh host|cuda SOURCE_DIR}
SRC=$(cd "${2:?usage: check_offline_build.sh host|cuda SOURCE_DIR}" && pwd) || { echo "FAIL: no source directory '$2'"; exit 1; }
CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
JOBS=${MINIAPP_JOBS:-$(nproc)}
WORK="$CACHE_ROOT/offline-check/$(printf '%s' "$SRC" | sha256sum | cut -c1-12)"
START=$SECONDS

relay() { sed 's/skipped:/skipped -/g'; }  # a failure's output can never read as a skip
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skipped: $*"; exit 0; }
step() { echo "== $* ($((SECONDS - START)) s)"; }

case "$BACKEND" in host|cuda) ;; *) fail "unknown backend '$BACKEND' (host or cuda)" ;; esac
[ "$(id -u)" -eq 0 ] || skip "needs root for unshare --net --mount (running as $(id -un))"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
unshare --net --mount true 2>/dev/null || skip "this machine refuses new network/mount namespaces (unshare --net --mount true failed)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
grep -qw overlay /proc/filesystems || skip "the kernel has no overlayfs to hide the system's packages with"
NVCC=""
if [ "$BACKEND" = cuda ]; then
  NVCC=$(command -v nvcc 2>/dev/null || true)
  [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
  [ -n "$NVCC" ] || skip "nvcc not found (neither on PATH nor in /usr/local/cuda/bin)"
fi
mkdir -p "$WORK"

# 1. The bundle, with the network (the only step that has it).
step "making the bundle: scripts/bundle.sh $WORK/bundle"
"$SRC/scripts/bundle.sh" "$WORK/bundle" > >(relay) 2>&1
rc=$?
[ "$rc" -eq 3 ] && skip "the Debian archive cannot be reached to download the bundle's packages"
[ "$rc" -eq 0 ] || fail "scripts/bundle.sh failed (exit $rc; its output is above)"
BUNDLE="$WORK/bundle"
du -sh "$BUNDLE" | awk '{print "bundle size (unpacked): " $1}'

# 2. The whiteouts: every file of the bundled packages, and of any BLAS/LAPACK package, that is
# installed here (an overlay hides a lower file under a character device 0:0 of the same name).
HIDE="$WORK/hide"
rm -rf "$HIDE"
mkdir -p "$HIDE"
mapfile -t hidden_packages < <(
  { sed -n 's/^package=\([^ ]*\) .*/\1/p' "$BUNDLE/MANIFEST"
    dpkg-query -W -f='${Package}\n' | grep -E '^lib(open)?blas|^liblapack|^libtmglib|^libyaml-cpp|^libbenchmark|^libgtest|^libgmock|^googletest|^libgfortran'
  } | sort -u)
count=0
for p in "${hidden_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || continue
  while IFS= read -r f; do
    case "$f" in /lib/*|/lib64/*) f="/usr$f" ;; /usr/*) ;; *) continue ;; esac
    [ -d "$f" ] && [ ! -L "$f" ] && continue
    [ -e "$f" ] || [ -L "$f" ] || continue
    mkdir -p "$HIDE/$(dirname "${f#/usr/}")" && mknod "$HIDE/${f#/usr/}" c 0 0 2>/dev/null && count=$((count + 1))
  done < <(dpkg -L "$p" 2>/dev/null)
done
echo "hiding $count files of ${#hidden_packages[@]} packages: ${hidden_packages[*]}"
[ "$count" -gt 0 ] || fail "found no installed files to hide (dpkg -L of ${hidden_packages[*]})"

# 3. Inside the namespaces: no network, the packages hidden, only the bundle's build script.
multiarch=$(sed -n 's/^architecture=//p' "$BUNDLE/MANIFEST")
inner=$(cat <<'INNER'
set -uo pipefail
fail() { echo "FAIL: $*"; exit 1; }
mount -t overlay miniapp-offline-hide -o "lowerdir=$HIDE:/usr" /usr || fail "mounting the overlay over /usr failed"
interfaces=$(awk -F: 'NR > 2 {gsub(/ /, "", $1); print $1}' /proc/net/dev | paste -sd' ')
echo "network interfaces in the namespace: $interfaces"
[ "$interfaces" = lo ] || fail "the namespace has interfaces other than lo: $interfaces"
[ -z "$(awk 'NR > 1' /proc/net/route)" ] || fail "the namespace has routes"
for f in /usr/include/yaml-cpp/yaml.h /usr/include/gtest/gtest.h /usr/include/benchmark/benchmark.h \
         "/usr/lib/$MULTIARCH/openblas-openmp/libopenblas.so.0" "/usr/lib/$MULTIARCH/libyaml-cpp.so.0.7" \
         "/usr/lib/$MULTIARCH/libgfortran.so.5" "/usr/lib/$MULTIARCH/cmake/GTest/GTestConfig.cmake"; do
  [ -e "$f" ] && fail "$f is still visible inside the namespace"
done
echo "hidden from /usr: yaml-cpp, GoogleTest, Google Benchmark, OpenBLAS, BLAS/LAPACK, libgfortran"
export OMP_PROC_BIND=false OMP_NUM_THREADS=2
script="$BUNDLE/project/scripts/build-offline.sh"
if [ "$BACKEND" = host ]; then
  # -O1 (build type Check): the rehearsal proves what the bundle provides, not the build's speed.
  # The mini-app and the e2e suite, which runs every deck of input/ through it (every workload,
  # OpenBLAS and yaml-cpp from the bundle, GoogleTest linked from it), not the unit-test binary:
  # its kernels are the mini-app's, tested by the main build, and it was 40% of this build.
  "$script" "$BUNDLE" --backend host --build-dir "$WORK/build-host" --jobs "$JOBS" --build-type Check \
    --targets miniapp,miniapp_e2e_tests,miniapp_jobs_tests,miniapp_region_tree \
    || fail "build-offline.sh --backend host failed"
  cd "$WORK/build-host/project" || fail "no project build"
  ctest -L 'unit|e2e' -E '^unit\.(serial|openmp|common|crash-report)$' --output-on-failure --timeout 900 \
    || fail "the e2e and unit tests of the offline build failed"
else
  PATH="$(dirname "$NVCC"):$PATH"
  # nvcc's device phases unoptimised, as in device.cuda-compile: nothing built here runs on a GPU.
  export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:+$NVCC_APPEND_FLAGS }-Xcicc -O0 -Xptxas -O0"
  "$script" "$BUNDLE" --backend cuda --arch sm_90 --build-dir "$WORK/build-cuda" --jobs "$JOBS" --build-type Check \
    --targets miniapp_e2e_tests,CMakeFiles/miniapp_objects.dir/miniapp/workloads/solver/solver.cpp.o \
    || fail "build-offline.sh --backend cuda --arch sm_90 failed"
  grep -q '^#define KOKKOS_ARCH_HOPPER90' "$WORK/build-cuda/kokkos-cuda-sm_90/include/KokkosCore_config.h" \
    || fail "the CUDA Kokkos was not configured for HOPPER90"
  obj="$WORK/build-cuda/project/CMakeFiles/miniapp_objects.dir/miniapp/workloads/solver/solver.cpp.o"
  archs=$(python3 "$FATBIN_ARCHS" "$obj") || fail "cannot read the fat binary of $obj"
  echo "solver.cpp.o device code: $archs"
  [[ " $archs " == *" elf:90 "* ]] || fail "$obj holds no sm_90 machine code ($archs)"
  for a in $archs; do case "$a" in elf:90|ptx:90) ;; *) fail "$obj holds device code for another architecture: $a" ;; esac; done
  "$WORK/build-cuda/project/tests/miniapp_e2e_tests" --gtest_list_tests >/dev/null \
    || fail "the CUDA build's e2e test binary does not start (its libraries?)"
fi
# GCC for this CPU (native) and Debian 12's assembler: the units must have had the unaligned-moves
# option (CMakeLists.txt), so that build-offline.sh checked the objects; through 3.4.01's
# nvcc_wrapper it once fell away with a warning only, and that check with it.
grep -qx 'MINIAPP_UNALIGNED_VECTOR_MOVES:INTERNAL=ON' "$WORK/build-$BACKEND/project/CMakeCache.txt" \
  || fail "the $BACKEND build's units were not given -Xassembler -muse-unaligned-vector-move (see its configure output)"
echo "offline $BACKEND build ok"
INNER
)
step "build-offline.sh --backend $BACKEND inside unshare --net --mount"
HIDE=$HIDE BUNDLE=$BUNDLE WORK=$WORK JOBS=$JOBS BACKEND=$BACKEND NVCC=$NVCC MULTIARCH=$multiarch \
  FATBIN_ARCHS="$SRC/tests/offline/fatbin_archs.py" \
  unshare --net --mount --propagation private bash -c "$inner" 2>&1 | relay
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "the offline $BACKEND build failed inside the namespace (exit $rc; output above)"
echo "ok: offline $BACKEND build from the bundle alone, no network ($((SECONDS - START)) s)"
