#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build (release), run the default scenario.
# Extra arguments go to `syncsim run`, e.g. ./run.sh --seed 7 --duration 6h
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/ensure-dependencies.sh
swift build -c release --product syncsim 2>&1 | grep -Ev '^\[[0-9]+/[0-9]+\]' || true
exec .build/release/syncsim run "$@"
