#!/usr/bin/env bash
# Sets up (Debian packages), builds the default preset and runs `syncoll demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake --preset default
cmake --build --preset default --target syncoll
./build/default/cli/syncoll demo "$@"
