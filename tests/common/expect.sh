# Sourced by the shell tests: `expect CODE FRAGMENT COMMAND...` runs the command and counts a
# failure in $failures unless it exits with CODE and its output (stdout and stderr) holds
# FRAGMENT; each check prints one line, ok or FAIL.
failures=0
expect() {  # exit code, message fragment, command...
  local code=$1 fragment=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$code" ] || [[ "$out" != *"$fragment"* ]]; then
    echo "FAIL: $* -> exit $rc (wanted $code), output: $out (wanted: $fragment)"
    failures=$((failures + 1))
  else
    echo "ok: $(basename "$1") ${*:2} -> exit $rc: $fragment"
  fi
}
