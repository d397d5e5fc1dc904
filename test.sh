#!/usr/bin/env bash
# Quick start, command 2: install what is missing, run every test, then check that a debug and a
# release build give the same trace digest and byte-identical CSV for the default scenario.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/ensure-dependencies.sh
swift test 2>&1 | grep -Ev '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Linking|Write|Wrapping)' 
bash scripts/check-debug-release.sh
