#!/usr/bin/env bash
# Runs every `syncoll ...` line of the README's "What works today" block, top to bottom, in a
# fresh folder (examples/ and tests/data linked in), and prints each one's exit code and wall time: the check a
# new user makes. Usage: scripts/readme-commands.sh [path/to/syncoll]; each command may run
# SYNCOLL_README_TIMEOUT seconds (default 600), past which it is stopped and reported (exit 124).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
syncoll="${1:-$root/build/default/cli/syncoll}"
work="$(mktemp -d)"
ln -s "$root/examples" "$work/examples"
# The commands that read the test suite's fixtures (an nccl-tests log, a graph file) find them as
# from the repository root.
mkdir -p "$work/tests"
ln -s "$root/tests/data" "$work/tests/data"
cd "$work"
# The block's lines, continuation lines joined, comments dropped.
mapfile -t commands < <(awk '/^## What works today/{on=1} on && /^```sh/{inblock=1; next}
  inblock && /^```/{exit} inblock' "$root/README.md" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | sed -e 's/[[:space:]]*#.*$//' | grep '^syncoll ')
failed=0
for command in "${commands[@]}"; do
  start=$(date +%s.%N)
  timeout "${SYNCOLL_README_TIMEOUT:-600}" "$syncoll" ${command#syncoll } > /dev/null \
    2> "$work/stderr"
  code=$?
  seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
  printf '%6.1f s  exit %d  %s\n' "$seconds" "$code" "$command"
  # 1 and 3 are verdicts the README shows on purpose (a deadlock, a race, a failing property;
  # a solver's time limit); 2 is bad input, 124 the timeout.
  if [ "$code" -eq 2 ] || [ "$code" -gt 3 ]; then
    failed=1
    sed 's/^/          /' "$work/stderr" | tail -3
  fi
done
rm -rf "$work"
exit "$failed"
