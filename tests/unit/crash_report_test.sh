#!/usr/bin/env bash
# unit.crash-report: the unit-test binary's test that raises SIGSEGV must be named in the crash
# report, with its stack, and the process must still die of the signal (tests/unit/main.cpp).
#   tests/unit/crash_report_test.sh MINIAPP_UNIT_TESTS
set -uo pipefail
bin=$1
out=$("$bin" --gtest_also_run_disabled_tests --gtest_filter=CrashReport.DISABLED_ASegfaultNamesItsTest 2>&1)
rc=$?
echo "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$rc" -eq $((128 + 11)) ] || fail "exit status $rc, not death by SIGSEGV (139)"
grep -q "^crashed: Segmentation fault in CrashReport.DISABLED_ASegfaultNamesItsTest$" <<<"$out" \
  || fail "no report naming the test"
grep -q "miniapp_unit_tests(+0x[0-9a-f]*)" <<<"$out" || fail "no stack frame in the binary"
# gpu-run.sh names the frames while the binary is there (scripts/lib/symbolize-crashes.sh)
named=$("$(dirname "$0")/../../scripts/lib/symbolize-crashes.sh" <(printf '%s\n' "$out"))
echo "$named"
if command -v addr2line >/dev/null; then
  grep -q "^crashed: Segmentation fault in CrashReport" <<<"$named" || fail "the named stack lost the report's line"
  grep -q "report_crash(int).*(miniapp_unit_tests+0x" <<<"$named" || fail "the handler's frame was not named"
else
  echo "note: no addr2line here (binutils): the frames' names were not checked"
fi
echo "ok: the crash named its test and stack, the frames were named, and the process died of SIGSEGV"
