#!/usr/bin/env bash
# Runs the demo session (transcript.py) many times on one CPU core shared with two
# busy loops, as on a loaded laptop or CI machine, and fails at the first run that
# does not go as described (issue 42: the demo failed 6 runs in 10 so, reporting an
# edit "rejected" that no one rejected).
#
#   tests/demo/contended.sh path/to/verbatim [runs]
set -euo pipefail

binary=$1
runs=${2:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c 0)
else
  echo "taskset not found: running without pinning to one core (the busy loops still compete)"
fi

busy=()
stop() { for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
for _ in 1 2; do
  "${pin[@]}" sh -c 'while :; do :; done' &
  busy+=($!)
done

log=$(mktemp)
for run in $(seq 1 "$runs"); do
  if ! "${pin[@]}" python3 "$here/transcript.py" "$binary" >"$log" 2>&1; then
    cat "$log"
    echo "the demo failed on run $run of $runs under contention (see above)" >&2
    rm -f "$log"
    exit 1
  fi
done
rm -f "$log"
echo "the demo went as described in all $runs runs on one core beside two busy loops"
