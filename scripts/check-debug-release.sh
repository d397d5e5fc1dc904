#!/usr/bin/env bash
# Runs a prefix of the default scenario with the debug and the release build and compares the
# trace digests and the deterministic CSV files byte for byte. The prefix (21 simulated hours, one
# partition of 10 clients; it holds the restore at 14 h and the termination at 20 h) keeps the debug
# run, which walks the invariants after every change, to a minute or two. Then a small sweep of
# reset-stress.json (its two restores at 6 h; two seeds, two reset modes; with a thin server egress
# and client bandwidth, so the links' queues are timed too; its second restore going 2 h back, past
# the 90 minutes its backups are kept), one job in debug and two in release:
# serial and parallel, debug and release must give the same files, and
# `syncsim compare --require-identical` must find every run the same; `bench targets` and
# `bench run` run both builds in turns, and must find the same digests.
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
sweep=(sweep Data/scenarios/reset-stress.json --seeds 2 --clients 10 --duration 7h --quiet
  --reset-modes recoverUnsyncedChanges,discardUnsyncedChanges
  --set server.egressBytesPerSecond=3000 --set network.bandwidthBytesPerSecond=20000
  --set 'faults[1].restorePointSecondsAgo=7200' --set server.backupRetentionSeconds=5400)
.build/debug/syncsim "${sweep[@]}" --jobs 1 --out "$work/sweep-debug" | tee "$work/sweep-debug.txt"
.build/release/syncsim "${sweep[@]}" --jobs 2 --out "$work/sweep-release" | tee "$work/sweep-release.txt"
if [ "$(grep '^digest=' "$work/sweep-debug.txt")" != "$(grep '^digest=' "$work/sweep-release.txt")" ]; then
  echo "FAIL: the sweep's digest differs between debug (1 job) and release (2 jobs)"; status=1
fi
for file in runs clients sweep sweep_paired; do
  if ! cmp -s "$work/sweep-debug/$file.csv" "$work/sweep-release/$file.csv"; then
    echo "FAIL: the sweep's $file.csv differs between debug (1 job) and release (2 jobs)"; status=1
  fi
done
# The same judgement run by run, as a user would make it between two builds.
if ! .build/release/syncsim compare "$work/sweep-debug" "$work/sweep-release" --out "$work/compare" \
    --require-identical --quiet; then
  echo "FAIL: syncsim compare finds runs that differ between debug and release"; status=1
fi
# The merge core alike: every cell of the merge targets, small, each a fresh process of each
# build; `bench targets` fails when a baseline's digests differ from the candidate's.
if ! .build/release/syncsim bench targets --baseline .build/debug/syncsim --instructions 400 \
    --objects 60 --rounds 1 --quiet --out "$work/targets" > "$work/targets.txt"; then
  echo "FAIL: bench targets finds merges that differ between debug and release"; status=1
fi
# The simulator's speed harness end to end, on the real builds: a small run of each, in turns;
# `bench run` fails when the debug build's digest differs from the release build's.
if ! .build/release/syncsim bench run --rounds 2 --baseline .build/debug/syncsim --quiet \
    --out "$work/bench-run" -- --duration 3h --clients 20 > "$work/bench-run.txt"; then
  echo "FAIL: bench run finds runs that differ between debug and release"; status=1
fi
# Standard output is line-buffered (main.swift): a command's header line comes before the
# progress lines it announces on standard error, also when both go to one file or pipe.
.build/release/syncsim sweep --clients 10 --duration 1h --seeds 2 --out "$work/order" \
  > "$work/order.txt" 2>&1
if ! head -1 "$work/order.txt" | grep -q '^sweep: '; then
  echo "FAIL: the sweep's header line is not its first line when stdout and stderr share a file"
  status=1
fi
if [ $status -eq 0 ]; then
  echo "debug and release agree: $release_digest, runs.csv and clients.csv byte-identical"
  echo "sweep: debug with 1 job and release with 2 agree: $(grep '^digest=' "$work/sweep-release.txt"), runs, clients, sweep and sweep_paired.csv byte-identical, compare: identical"
  echo "merge: debug and release give the same digests in all $(($(wc -l < "$work/targets/targets_compare.csv") - 1)) cells of bench targets"
  tail -1 "$work/bench-run.txt"
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
fi
exit $status
