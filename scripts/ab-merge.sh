#!/usr/bin/env bash
# Compares two builds of `syncsim` on one `bench merge` workload, the way the README's
# "Measuring on a noisy machine" asks: single runs in turns (before, after, before, after, ...),
# then the fastest and the median merge CPU time of each and their ratios. Both builds must give
# the same replica and changeset digests, in every run: a change that moves a digest is not a
# performance change, and the script fails (exit 1) if any run disagrees.
#
#   scripts/ab-merge.sh [--rounds N] [--callgrind] BEFORE AFTER BENCH-ARGS...
#
# BEFORE and AFTER are `syncsim` executables; BENCH-ARGS go to `syncsim bench merge` as they
# are (one workload or trace at one size; `--repetitions` and `--csv` are the script's).
# `--callgrind` also counts the instructions of the merge alone, once per build, under
# valgrind's callgrind (a count that does not drift with the machine's speed; see the README).
#
# Example:
#   scripts/ab-merge.sh --rounds 9 /tmp/syncsim-before .build/release/syncsim \
#       --workload text-like --clients 100 --instructions 300000
set -euo pipefail

usage() {
  echo "usage: scripts/ab-merge.sh [--rounds N] [--callgrind] BEFORE AFTER BENCH-ARGS..." >&2
  echo "  BEFORE, AFTER: syncsim executables; BENCH-ARGS: arguments of 'syncsim bench merge'" >&2
  exit 2
}

rounds=7
callgrind=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds)
      [ $# -ge 2 ] || usage
      rounds=$2
      shift 2
      ;;
    --callgrind) callgrind=1; shift ;;
    --help|-h) usage ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || usage
case "$rounds" in
  ''|*[!0-9]*|0) echo "ab-merge: --rounds must be a positive integer, got '$rounds'" >&2; exit 2 ;;
esac
before=$1
after=$2
shift 2
for binary in "$before" "$after"; do
  if [ ! -x "$binary" ]; then
    echo "ab-merge: '$binary' is not an executable (build it: swift build -c release --product syncsim)" >&2
    exit 2
  fi
done
previous=""
for arg in "$@"; do
  case "$arg" in
    --repetitions|--csv) echo "ab-merge: '$arg' is set by the script; leave it out of BENCH-ARGS" >&2; exit 2 ;;
    --growth) echo "ab-merge: '--growth' runs several sizes; compare one size at a time (--instructions N)" >&2; exit 2 ;;
    --workload=all) previous=--workload; arg=all ;;
  esac
  if [ "$previous" = --workload ] && [ "$arg" = all ]; then
    echo "ab-merge: compares one workload at a time; name one instead of 'all'" >&2
    exit 2
  fi
  previous=$arg
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The build a side runs.
binary_of() { if [ "$1" = before ]; then echo "$before"; else echo "$after"; fi; }

# Prints "cpu_seconds replica_digest changeset_digest" of one run, read by column name.
run_once() {
  local binary=$1
  shift
  "$binary" bench merge "$@" --repetitions 1 --csv "$work/run.csv" > /dev/null || return 1
  tr -d '\r' < "$work/run.csv" | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) column[$i] = i; next }
    NR == 2 { print $column["merge_cpu_seconds"], $column["replica_digest"], $column["changeset_digest"] }'
}

: > "$work/before.txt"
: > "$work/after.txt"
reference=""
status=0
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    binary=$(binary_of "$side")
    if ! result=$(run_once "$binary" "$@") || [ -z "$result" ]; then
      echo "ab-merge: round $round, $side ($binary): 'bench merge' failed or printed no row" >&2
      exit 2
    fi
    read -r seconds replica changesets <<< "$result"
    echo "$seconds" >> "$work/$side.txt"
    digests="$replica $changesets"
    if [ -z "$reference" ]; then
      reference=$digests
    elif [ "$digests" != "$reference" ]; then
      echo "FAIL: round $round, $side ($binary): digests $digests, expected $reference" >&2
      status=1
    fi
  done
done

# fastest and median of a file of numbers, one per line
summary() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%s %s", v[1], v[int((NR + 1) / 2)] }'; }
read -r before_fastest before_median <<< "$(summary "$work/before.txt")"
read -r after_fastest after_median <<< "$(summary "$work/after.txt")"
echo "merge CPU seconds over $rounds rounds in turns (fastest / median):"
echo "  before $before_fastest / $before_median   ($before)"
echo "  after  $after_fastest / $after_median   ($after)"
awk -v bf="$before_fastest" -v bm="$before_median" -v af="$after_fastest" -v am="$after_median" \
  'BEGIN { printf "  after / before: %.2f / %.2f\n", af / bf, am / bm }'
if [ $status -eq 0 ]; then
  echo "digests (replica changesets): $reference, equal in every run"
else
  echo "digests DIFFER between runs (the FAIL lines above): not a performance comparison"
fi

if [ $callgrind -eq 1 ]; then
  if ! command -v valgrind > /dev/null; then
    echo "ab-merge: --callgrind needs valgrind (apt-get install valgrind)" >&2
    exit 2
  fi
  echo "instructions of the merge alone (callgrind):"
  for side in before after; do
    binary=$(binary_of "$side")
    # valgrind 3.19 cannot read Swift 6.3's debug information: count a stripped copy.
    strip -g -o "$work/$side-stripped" "$binary"
    valgrind --tool=callgrind --toggle-collect='*TransformerV5merge8incoming*' \
      --callgrind-out-file="$work/$side.callgrind" \
      "$work/$side-stripped" bench merge "$@" --repetitions 1 > /dev/null 2> "$work/$side.valgrind"
    count=$(grep -o 'refs: *[0-9,]*' "$work/$side.valgrind" | tr -dc '0-9')
    echo "  $side $count"
    echo "$count" > "$work/$side.count"
  done
  awk -v b="$(cat "$work/before.count")" -v a="$(cat "$work/after.count")" \
    'BEGIN { printf "  after / before: %.3f\n", a / b }'
fi
exit $status
