#!/usr/bin/env bash
# Installs the system packages SyncSim needs, only when they are missing:
#   libgsl-dev (GSL: random streams, distributions, statistics), libsqlite3-dev (SQLite for GRDB),
#   pkg-config (lets SwiftPM find GSL). Needs the Swift toolchain already on PATH.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
  echo "error: 'swift' is not on PATH. Install the Swift 6.1+ toolchain (swift.org/install), then run this again." >&2
  exit 1
fi

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists gsl; } && [ ! -f /usr/include/gsl/gsl_rng.h ]; then
  missing+=(libgsl-dev)
fi
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "Installing missing system packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  apt_get=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  apt_get=(sudo apt-get)
else
  echo "error: ${missing[*]} missing and this user cannot install packages (not root, no password-less sudo)." >&2
  echo "Fix: ask an administrator to run: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: ${missing[*]} missing and apt-get is not available on this system." >&2
  echo "Fix: install the equivalents of ${missing[*]} with your package manager (brew install gsl pkg-config sqlite on macOS)." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt_get[@]}" update -qq
"${apt_get[@]}" install -y -qq "${missing[@]}" >/dev/null
echo "Installed: ${missing[*]}"
