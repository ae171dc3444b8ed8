#!/usr/bin/env bash
# The frames of each crash report in a log (tests/unit/main.cpp prints them as
# `FILE(+0xOFFSET)[ADDRESS]` or `FILE(SYMBOL+0xOFFSET)[ADDRESS]`), named while the binaries that
# made them are still there: a lent GPU machine is gone when its log is read. Prints, per crash,
# the report's line and then a line per frame: the function (demangled) and, where the build kept
# line tables, its file and line. Frames of a file that is gone or unreadable are printed as they
# stood. Exit 0 with nothing printed where the log holds no crash report; 2 on a usage error.
#   scripts/lib/symbolize-crashes.sh LOG
set -uo pipefail
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: symbolize-crashes.sh LOG (a readable file)" >&2; exit 2; }
command -v addr2line >/dev/null || { echo "symbolize-crashes: no addr2line on this machine (binutils)"; exit 0; }
frame_re='^(/[^(]+)\(([^)+]*)\+(0x[0-9a-f]+)\)'
while IFS= read -r line; do
  if [[ $line == crashed:* ]]; then
    printf '%s\n' "$line"
    continue
  fi
  [[ $line =~ $frame_re ]] || continue
  file=${BASH_REMATCH[1]} symbol=${BASH_REMATCH[2]} offset=${BASH_REMATCH[3]}
  if [ -n "$symbol" ]; then  # an exported symbol and the offset into it: named already
    printf '  %s+%s (%s)\n' "$(c++filt "$symbol" 2>/dev/null || echo "$symbol")" "$offset" "$(basename "$file")"
  elif [ -r "$file" ]; then
    # -i: the functions inlined at that address as well, innermost first
    named=$(addr2line -f -C -i -e "$file" "$offset" 2>/dev/null |
      awk 'NR % 2 { f = $0; next } { s = s (s ? ", inlined in " : "") f ($0 == "??:?" || $0 == "??:0" ? "" : " at " $0) }
           END { print s }')
    printf '  %s (%s+%s)\n' "${named:-??}" "$(basename "$file")" "$offset"
  else
    printf '  %s\n' "$line"
  fi
done <"$1"
