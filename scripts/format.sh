#!/usr/bin/env bash
# Formats every C++ file with the committed .clang-format (the FormatCheck test enforces it).
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -co --exclude-standard '*.h' '*.cpp' | xargs clang-format -i
