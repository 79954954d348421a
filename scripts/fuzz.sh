#!/usr/bin/env bash
# Long fuzz campaigns of syncoll's readers: builds the fuzz preset (clang, libFuzzer, ASan, UBSan,
# leak checking) and runs each target of tests/fuzz/targets.txt (or those named) for RUNS
# executions, then prints one row per target: executions, seconds, executions per second, the
# corpus it ended with and its result. A crash, a hang (an input over 10 s) or a leak stops that
# target with a nonzero status and leaves the input under build/fuzz/fuzz-artifacts/; keep it as a
# regression input in tests/fuzz/corpus/<target>/ once fixed.
#   bash scripts/fuzz.sh [--runs N] [target ...]        (default 1000000 runs each, every target)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1000000
if [ "${1:-}" = "--runs" ]; then runs="$2"; shift 2; fi
cmake --preset fuzz > /dev/null
cmake --build --preset fuzz
mapfile -t lines < <(grep -E '^[a-z]' tests/fuzz/targets.txt)
mkdir -p build/fuzz/fuzz-artifacts build/fuzz/fuzz-logs
rows=()
status=0
for line in "${lines[@]}"; do
  read -r name library folders <<< "$line"
  if [ $# -gt 0 ] && [[ ! " $* " =~ " $name " ]]; then continue; fi
  work="build/fuzz/fuzz-corpus/$name"
  mkdir -p "$work"
  log="build/fuzz/fuzz-logs/$name.log"
  start=$(date +%s.%N)
  result=ok
  # shellcheck disable=SC2086
  if ! "build/fuzz/tests/fuzz/fuzz_$name" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build/fuzz/fuzz-artifacts/$name-" "$work" \
      "tests/fuzz/corpus/$name" tests/data/malformed $folders > "$log" 2>&1; then
    result="FAILED (see $log)"
    status=1
  fi
  end=$(date +%s.%N)
  executed=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  rate=$(awk -v n="${executed:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", n / s }')
  rows+=("$(printf '%-18s %12s %9s %10s %8s  %s' "$name" "${executed:-?}" "$seconds" "$rate" \
    "$(ls "$work" | wc -l)" "$result")")
done
printf '%-18s %12s %9s %10s %8s  %s\n' target executions seconds "exec/s" corpus result
printf '%s\n' "${rows[@]}"
exit $status
