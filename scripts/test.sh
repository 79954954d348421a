#!/usr/bin/env bash
# Sets up (Debian packages), builds with warnings as errors and runs the whole test suite with
# ctest. SYNCOLL_PRESET=asan runs it under AddressSanitizer and UndefinedBehaviorSanitizer, with
# 12 s of libFuzzer on each reader; SYNCOLL_PRESET=tsan builds and runs the CPU executor's tests
# (executor_tests) under ThreadSanitizer; SYNCOLL_PRESET=fuzz builds only the readers' libFuzzer
# targets (clang) and runs each for 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${SYNCOLL_PRESET:-ci}"
bash scripts/setup.sh
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset" -j "$(nproc)" --timeout 300
