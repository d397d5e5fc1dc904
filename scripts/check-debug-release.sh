#!/usr/bin/env bash
# Runs a prefix of the default scenario with the debug and the release build and compares the
# trace digests and the deterministic CSV files byte for byte. The prefix (21 simulated hours, one
# partition of 10 clients; it holds the restore at 14 h and the termination at 20 h) keeps the debug
# run, which walks the invariants after every change, to a minute or two.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(--duration 21h --clients 10 --quiet)
swift build --product syncsim 2>&1 | grep -E 'error|warning: unre' || true
swift build -c release --product syncsim 2>&1 | grep -E 'error|warning: unre' || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.build/debug/syncsim run "${args[@]}" --out "$work/debug" | tee "$work/debug.txt"
.build/release/syncsim run "${args[@]}" --out "$work/release" | tee "$work/release.txt"
debug_digest=$(grep '^digest=' "$work/debug.txt")
release_digest=$(grep '^digest=' "$work/release.txt")
status=0
if [ "$debug_digest" != "$release_digest" ]; then
  echo "FAIL: debug $debug_digest != release $release_digest"; status=1
fi
for table in runs clients; do
  if ! cmp -s "$work/debug/$table.csv" "$work/release/$table.csv"; then
    echo "FAIL: $table.csv differs between debug and release"; status=1
  fi
done
if [ $status -eq 0 ]; then
  echo "debug and release agree: $release_digest, runs.csv and clients.csv byte-identical"
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
fi
exit $status
