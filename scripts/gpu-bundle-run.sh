#!/bin/sh
# The GPU bundle's checks (copied to build/gpu-bundle/run.sh by scripts/gpu-bundle.sh).
#
#   run.sh          on a GPU machine: device, driver and CUDA facts; every program under
#                   single-GPU emulation at three sizes with direct puts and all staged, each output
#                   checked; the deadlock example stopped on its cycle; a grid too large refused;
#                   NCCL's device API on one rank with the machine's NCCL (2.28 or newer;
#                   one line why not otherwise); compute-sanitizer memcheck, racecheck and
#                   synccheck on three programs; cuda_bench. Writes gpu-report.md (one table) beside this script, or at
#                   $GPU_REPORT. Exit 0 when everything is right, 1 on any wrong result, 77 when
#                   there is no GPU.
#   run.sh --cpu    the same programs through the CPU executor (what CI runs): no GPU needed.
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
report=${GPU_REPORT:-$here/gpu-report.md}

if [ "${1:-}" = "--cpu" ]; then
  exec "$here/gpu_check" run "$here" --cpu --report "$report"
elif [ $# -gt 0 ]; then
  echo "run.sh: unknown option '$1' (expected nothing or --cpu)" >&2
  exit 2
fi

# NCCL is loaded at run time: the machine's own (a Python wheel's, where the library path has
# none), unless SYNCOLL_NCCL_LIBRARY names one.
if [ -z "${SYNCOLL_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2; then
  wheel=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
  if [ -n "$wheel" ] && [ -f "$wheel" ]; then
    SYNCOLL_NCCL_LIBRARY=$wheel
    export SYNCOLL_NCCL_LIBRARY
  fi
fi

started=$(date +%s)
"$here/gpu_check" run "$here" --report "$report"
status=$?
[ $status -eq 77 ] && exit 77
[ $status -eq 2 ] && exit 2
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)

row() { # check, result, detail
  printf '| %s | %s | %s | %s |\n' "$1" "${device:-GPU}" "$2" "$3" >>"$report"
  printf '%-7s %-58s %s\n' "$2" "$1" "$3"
}

# The interpreter's bus bandwidth against the device's copy bandwidth (bench/cuda_bench).
if timeout 150 "$here/cuda_bench" 256 >"$here/cuda_bench.log" 2>&1; then
  row "cuda_bench 256 MiB" "ok" "$(grep -E 'allreduce|allgather|copy' "$here/cuda_bench.log" | tr '\n' ';' | tr -s ' ')"
else
  row "cuda_bench 256 MiB" "WRONG" "$(tail -1 "$here/cuda_bench.log")"
  status=1
fi
# compute-sanitizer on three programs: a ring in LL128, a tree in Simple, an example in place.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# run.sh keeps to its 4 minutes: a sanitizer run gets at most 60 s and none starts after 230 s;
# one cut short or never started is a row saying so ("unknown", neither clean nor wrong).
for tool in memcheck racecheck synccheck; do
  if [ -z "$sanitizer" ]; then
    row "compute-sanitizer $tool" "not run" "compute-sanitizer is not on this machine"
    continue
  fi
  for program in nccl_ring_allreduce_4r_2ch_LL128 nccl_tree_allreduce_4r_2ch_Simple example_ring_allreduce_inplace; do
    log=$here/sanitizer-$tool-$program.log
    if [ $(($(date +%s) - started)) -gt 230 ]; then
      row "compute-sanitizer $tool $program" "unknown" "not started: run.sh had used 230 s of its 4 minutes"
      continue
    fi
    timeout 60 "$sanitizer" --tool "$tool" --error-exitcode 9 \
      "$here/gpu_check" run "$here" --only "$program" >"$log" 2>&1
    code=$?
    if [ $code -eq 0 ]; then
      row "compute-sanitizer $tool $program" "ok" "$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log")"
    elif [ $code -eq 124 ]; then
      row "compute-sanitizer $tool $program" "unknown" "cut short after 60 s: $(tail -1 "$log")"
    elif grep -q 'Device not supported' "$log"; then
      # The sandbox refuses the tool the device (seen under gVisor): not the program's fault.
      row "compute-sanitizer $tool $program" "not run" "$(grep -m1 'Device not supported' "$log")"
    else
      row "compute-sanitizer $tool $program" "WRONG" "$(grep -m1 -E 'ERROR SUMMARY|Invalid|Race' "$log")"
      status=1
    fi
  done
done

echo "run.sh: report in $report"
exit $status
