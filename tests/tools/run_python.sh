#!/bin/sh
# Runs a Python test with the interpreter CMake found, or with python3 on PATH where that path does
# not exist when the test runs (a build made on another machine: scripts/gpu-run.sh --prebuilt).
#   run_python.sh CONFIGURED_PYTHON SCRIPT [ARGS...]
p=$1
shift
[ -x "$p" ] || p=python3
exec "$p" "$@"
