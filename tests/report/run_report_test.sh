#!/usr/bin/env bash
# ctest driver of tests/report (label `report`):
#   run_report_test.sh GROUP MINIAPP SOURCE_DIR
# Makes sure Debian's python3 with matplotlib (and chromium for GROUP=chromium) is installed,
# through scripts/bootstrap-debian.sh --report-packages, then runs test_report.py GROUP. Prints
# "skipped: <why>" (ctest: skipped) only when no package archive here offers them; a failed
# install of packages the archive has fails the test.
set -uo pipefail

GROUP=${1:?usage: run_report_test.sh GROUP MINIAPP SOURCE_DIR}
MINIAPP=${2:?usage: run_report_test.sh GROUP MINIAPP SOURCE_DIR}
SRC=${3:?usage: run_report_test.sh GROUP MINIAPP SOURCE_DIR}

needed() {  # the Debian packages this group needs that are missing
  local missing=()
  /usr/bin/python3 -c 'import matplotlib, numpy' 2>/dev/null || missing+=(python3-matplotlib)
  if [ "$GROUP" = chromium ] && ! command -v chromium >/dev/null 2>&1; then missing+=(chromium); fi
  echo "${missing[@]}"
}

missing=$(needed)
if [ -n "$missing" ]; then
  log=$(mktemp)
  "$SRC/scripts/bootstrap-debian.sh" --report-packages >"$log" 2>&1
  status=$?
  missing=$(needed)
  if [ -n "$missing" ]; then
    for p in $missing; do
      if command -v apt-cache >/dev/null 2>&1 && apt-cache policy "$p" 2>/dev/null | grep -qE 'Candidate: [0-9]'; then
        tail -n 20 "$log"
        rm -f "$log"
        echo "FAIL: the package archive has $p but installing it failed (bootstrap exit $status, output above)"
        exit 1
      fi
    done
    rm -f "$log"
    echo "skipped: $missing cannot be installed here (no package archive offers it; Debian: python3-matplotlib, chromium)"
    exit 0
  fi
  rm -f "$log"
fi
exec /usr/bin/python3 "$SRC/tests/report/test_report.py" "$GROUP" "$MINIAPP" "$SRC"
