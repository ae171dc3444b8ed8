#!/usr/bin/env bash
# Command 1 of the README: installs and builds what is missing, then runs a deck.
#
#   scripts/run.sh [DECK.yaml] [miniapp options]     (default deck: input/quickstart.yaml)
#
# With no arguments it runs the quickstart into results/quickstart-<YYYYmmdd-HHMMSS>/, then
# prints the advisor's summary of it (`miniapp advise`: text here, advice.json beside the results)
# and the command that draws the report. Exit code: the run's (see `miniapp --help`); a failing
# advisor is reported but does not change it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${MINIAPP_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/build.sh"

export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
MINIAPP="$BUILD_DIR/bin/miniapp"

if [ $# -gt 0 ]; then
  deck="$ROOT/input/quickstart.yaml"
  if [ "${1#-}" = "$1" ]; then deck=$1; shift; fi
  exec "$MINIAPP" "$deck" "$@"
fi

out="$ROOT/results/quickstart-$(date +%Y%m%d-%H%M%S)"
rc=0
"$MINIAPP" "$ROOT/input/quickstart.yaml" -o "$out" || rc=$?
if [ -f "$out/results.json" ]; then
  echo
  echo "== The advisor's answer for this machine (miniapp advise $out) =="
  if "$MINIAPP" advise "$out"; then
    echo
    echo "Report with plots: $MINIAPP report $out   (writes $out/report/report.html;"
    echo "  needs python3-matplotlib: scripts/bootstrap-debian.sh --report-packages)"
  else
    echo "run.sh: the advisor could not answer (exit $?); the results are in $out" >&2
  fi
fi
exit "$rc"
