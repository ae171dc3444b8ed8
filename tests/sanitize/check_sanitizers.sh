#!/usr/bin/env bash
# The bugs users would find first, found by tools before them:
#
#   check_sanitizers.sh asan SOURCE_DIR
#       builds the mini-app and its unit and end-to-end tests with AddressSanitizer and
#       UndefinedBehaviorSanitizer (g++, the same Kokkos as the main build, the OpenMP space only)
#       and runs them: every unit test, and the e2e suite, which runs every input/ deck at small sizes,
#       the bad decks, signals and write errors, and the random valid decks.
#   check_sanitizers.sh fuzz SOURCE_DIR [SECONDS]
#       builds the deck fuzz target (tests/fuzz/fuzz_deck.cpp) with clang's libFuzzer under
#       ASan/UBSan and fuzzes the deck path for SECONDS (default 60), seeded with input/,
#       tests/decks/bad/ and tests/fuzz/corpus/ and the dictionary tests/fuzz/deck.dict. Any crash,
#       leak, hang (10 s per input) or deck that neither validates nor names its line fails; the
#       input that did it is left in the build directory and its path printed.
#
# Builds live in $MINIAPP_CACHE/sanitize-builds/<mode>-<hash of SOURCE_DIR> and are incremental.
# Prints "skipped: <why>" (ctest: skipped) only when clang or libFuzzer cannot be installed.
set -uo pipefail

MODE=${1:?usage: check_sanitizers.sh asan|fuzz SOURCE_DIR [SECONDS]}
SRC=$(cd "${2:?usage: check_sanitizers.sh asan|fuzz SOURCE_DIR [SECONDS]}" && pwd) || { echo "FAIL: no source directory"; exit 1; }
SECONDS_TO_FUZZ=${3:-60}
CACHE_ROOT="${MINIAPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kokkos-miniapp}"
JOBS=${MINIAPP_JOBS:-$(nproc)}
START=$SECONDS

relay() { sed 's/skipped:/skipped -/g'; }
fail() { echo "FAIL: $*"; exit 1; }

prefix=$("$SRC/scripts/bootstrap-debian.sh" --print-prefix 2> >(relay >&2)) \
  || fail "scripts/bootstrap-debian.sh failed (its output is above)"
build="$CACHE_ROOT/sanitize-builds/$MODE-$(printf '%s' "$SRC" | sha256sum | cut -c1-12)"
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# -O1 -g1 for ASan: the sanitizers' usual level, with line numbers in reports; compiles faster
# than -O2. -O0 -g1 for the fuzzer: its build is mostly the workloads' kernels, which it never
# runs (clang -O0 took 0.44x -O1's time for one of them), and the deck path still runs fast.
case "$MODE" in fuzz) level="-O0 -g1" ;; *) level="-O1 -g1" ;; esac
# One space each (MINIAPP_ONLY_SPACES): the workloads' kernels are compiled once per space, and
# each space costs minutes under the sanitizers. ASan/UBSan takes OpenMP, whose two threads split
# every range that Serial runs whole (the partitions are where an index goes out of bounds); Serial
# is tested by the main build and on Kokkos 4.5.1. The fuzzer runs no kernel: Serial, the smaller.
case "$MODE" in fuzz) spaces=serial ;; *) spaces=openmp ;; esac
# A unity build (CMake merges up to 8 sources of a target into one unit, as the device and compat
# checks build): every unit parses Kokkos' and GoogleTest's headers once, which under the
# sanitizers cost most of the time of the units that launch no kernel (ASan/UBSan 657 -> 552 s,
# the fuzzer 177 -> 139 s from an empty cache on the 2-core Zen 3). The workloads' generated
# units stay apart.
configure() {  # compiler flags cmake-args...
  local cxx=$1 flags=$2; shift 2
  local cache="$build/CMakeCache.txt"
  if [ -f "$cache" ] && grep -qx "Kokkos_ROOT:[A-Z]*=$prefix" "$cache" \
     && grep -qxF "CMAKE_CXX_FLAGS:STRING=$flags" "$cache" \
     && grep -qxF "CMAKE_CXX_FLAGS_SANITIZE:STRING=$level" "$cache" \
     && grep -qx "CMAKE_BUILD_TYPE:[A-Z]*=Sanitize" "$cache" \
     && grep -qx "MINIAPP_WITH_MPI:STRING=OFF" "$cache" \
     && grep -qx "CMAKE_UNITY_BUILD:[A-Z]*=ON" "$cache" \
     && grep -qxF "MINIAPP_ONLY_SPACES:STRING=$spaces" "$cache"; then
    return 0
  fi
  echo "configuring $build"
  rm -rf "$build"
  mkdir -p "$build"
  # Without MPI: the unit and e2e tests run no rank of an MPI job, so its test program would be
  # built for nothing (the mpi label runs in the main build).
  if ! cmake -S "$SRC" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="$level" \
         -DCMAKE_CXX_COMPILER="$cxx" \
         -DCMAKE_CXX_FLAGS="$flags" -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix" \
         -DMINIAPP_ENABLE_BENCHMARKS=OFF -DMINIAPP_WITH_MPI=OFF -DMINIAPP_ONLY_SPACES="$spaces" \
         -DCMAKE_UNITY_BUILD:BOOL=ON "$@" >"$build/configure.log" 2>&1; then
    relay <"$build/configure.log"
    rm -rf "$build"
    fail "configuring the $MODE build failed"
  fi
}

compile() {  # targets...
  echo "building $* in $build (-j $JOBS)"
  cmake --build "$build" --parallel "$JOBS" --target "$@" 2>&1 | relay | grep -vE '^\[[0-9]+/[0-9]+\]'
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "the $MODE build does not compile (errors above)"
}

case "$MODE" in
  asan)
    # -Wno-subobject-linkage: in a unity unit GCC warns of every type of a source's anonymous
    # namespace that a named type of that source uses (gtest's fixtures, nvml.cpp's Api), as if
    # the two came from different files; the main build, unmerged, keeps the warning.
    configure g++ "$sanitize -Wno-subobject-linkage"
    compile all  # every test program the unit and e2e labels run (benchmarks are off)
    echo "built in $((SECONDS - START)) s; running the unit and e2e tests under ASan/UBSan"
    # LeakSanitizer is on (the default); halt_on_error makes the first report fail the test.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    export OMP_PROC_BIND=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
    # Not the unit tests of scripts and Python (nothing sanitized runs in them).
    (cd "$build" && ctest --output-on-failure -L 'unit|e2e' \
       -E '^unit\.(bundle-arguments|gpu-summary|code-measures|results-schema)$' 2>&1 | relay)
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "a test failed or a sanitizer reported an error under ASan/UBSan (above)"
    # Serial is not compiled here (its kernels are OpenMP's templates): OpenMP on one thread runs
    # the partitions of concurrency 1 that Serial takes (gemm-tiled's row runs, the blocked
    # solver's teams), which two threads never reach. About as long again as unit.openmp.
    echo "unit.openmp again on one thread (the partitions of concurrency 1)"
    (cd "$build" && OMP_NUM_THREADS=1 ctest --output-on-failure -R '^unit\.openmp$' 2>&1 | relay)
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "unit.openmp on one thread failed or a sanitizer reported an error under ASan/UBSan (above)"
    echo "ok: unit and e2e tests clean under ASan/UBSan ($((SECONDS - START)) s)"
    ;;
  fuzz)
    # Always asked for (quick when present): the HIP check's libomp-<N>-dev for hipcc's clang
    # replaces clang's own, and without it Kokkos' headers find no omp.h.
    log=$(mktemp)
    "$SRC/scripts/bootstrap-debian.sh" --fuzz-packages >"$log" 2>&1
    clang=$(command -v clang++ || true)
    fuzzer_lib=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -n 1)
    if [ -z "$clang" ] || [ -z "$fuzzer_lib" ] || ! grep -q "fuzzing packages ready" "$log"; then
      clang=$(command -v clang++ || true)
      fuzzer_lib=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -n 1)
      if [ -z "$clang" ] || [ -z "$fuzzer_lib" ]; then
        if apt-cache policy clang libfuzzer-14-dev 2>/dev/null | grep -qE 'Candidate: [0-9]'; then
          relay <"$log" | tail -n 20
          fail "Debian's archive has clang and libFuzzer but installing them failed (output above)"
        fi
        echo "skipped: clang and libFuzzer cannot be installed: the package archive has neither clang nor libfuzzer-14-dev"
        exit 0
      fi
      relay <"$log" | tail -n 3
    fi
    # Kokkos' OpenMP flags make clang link LLVM's OpenMP runtime next to Kokkos' libgomp: harmless
    # here, since the deck path starts no parallel region (Kokkos is not even initialised).
    configure "$clang" "$sanitize -fsanitize=fuzzer-no-link" -DMINIAPP_ENABLE_TESTS=OFF -DMINIAPP_ENABLE_FUZZING=ON
    compile miniapp_fuzz_deck
    corpus="$build/corpus"  # grows between runs here; the repository's corpus only grows by hand
    mkdir -p "$corpus" "$build/findings"
    echo "built in $((SECONDS - START)) s; fuzzing the deck path for $SECONDS_TO_FUZZ s"
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    (cd "$build/findings" && "$build/bin/miniapp_fuzz_deck" -max_total_time="$SECONDS_TO_FUZZ" -timeout=10 \
        -rss_limit_mb=4096 -max_len=4096 -dict="$SRC/tests/fuzz/deck.dict" -print_final_stats=1 \
        "$corpus" "$SRC/tests/fuzz/corpus" "$SRC/input" "$SRC/tests/decks/bad" 2>&1 \
      | grep -vE '^(#[0-9]+\s+(NEW|REDUCE|pulse)|\s*NEW_FUNC|"|###)' | relay)
    status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
      echo "finding(s), reproduce with: $build/bin/miniapp_fuzz_deck FILE"
      ls -1 "$build/findings"/crash-* "$build/findings"/leak-* "$build/findings"/timeout-* "$build/findings"/oom-* 2>/dev/null
      fail "the deck fuzzer found an input that crashes, leaks, hangs or is refused without a line (exit $status)"
    fi
    echo "ok: $SECONDS_TO_FUZZ s of deck fuzzing found nothing ($((SECONDS - START)) s in all)"
    ;;
  *) fail "unknown mode '$MODE' (asan or fuzz)" ;;
esac
