#!/usr/bin/env bash
# Where CI's time goes: `bash bench/ci_times.sh LOG [COMMAND...]` runs COMMAND (default
# `bash .ci/test`) with every output line timestamped into LOG, then prints each test binary's
# run time (its `Running`/`Doc-tests` line to its `test result:` line), the slowest first, and
# the time before the first binary ran (compiling). With LOG alone and no COMMAND, LOG must
# exist and is only summarized. Used for the tables in bench/ci.md.
set -uo pipefail
log=${1:?usage: bench/ci_times.sh LOG [COMMAND...]}
shift
if [ $# -gt 0 ] || [ ! -e "$log" ]; then
  [ $# -gt 0 ] || set -- bash .ci/test
  "$@" 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$log"
  status=${PIPESTATUS[0]}
else
  status=0
fi
awk '
NR == 1 { first = $1 }
/ Running |Doc-tests / {
  if (!ran) { ran = $1 }
  name = $0; sub(/^[0-9.]+ +/, "", name); sub(/target\/debug\/deps\//, "", name); start = $1
}
/test result:/ { if (name != "") { printf "%8.1f  %s\n", $1 - start, name; total += $1 - start; name = "" } }
{ last = $1 }
END {
  printf "%8.1f  (all test binaries)\n", total
  printf "%8.1f  (before the first binary ran: compiling)\n", ran - first
  printf "%8.1f  (wall, first line to last)\n", last - first
}' "$log" | sort -rn
exit "$status"
