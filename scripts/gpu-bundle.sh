#!/usr/bin/env bash
# Builds build/gpu-bundle/: the GPU checks as a folder that runs on a bare x86-64 Linux with an
# NVIDIA driver and nothing else (no compiler, no CUDA toolkit, none of syncoll's Debian
# packages, no network). Carry it to a GPU machine and run its run.sh there (README, "GPU").
#
#   scripts/gpu-bundle.sh              build the bundle (a Release build in build/gpu-bundle-build)
#   scripts/gpu-bundle.sh --from DIR   the bundle from a build folder already configured (CI's
#                                      build/ci, so CI compiles the library once, not twice)
#
# What it holds: gpu_check (tests/gpu/gpu_check.cpp) and cuda_bench, built with libstdc++, libgcc
# and the CUDA runtime linked statically (SYNCOLL_BUNDLE=ON; NCCL is the machine's, loaded at run
# time), or from another build with their debug information stripped; the shared libraries they
# still load that a bare machine lacks (with --from, libstdc++ and the CUDA runtime among them),
# under lib/, which run.sh puts on the library path; the programs gpu_check runs
# (programs/: every DSL example in each aliasing mode, NCCL's rings and trees in Simple, LL and
# LL128, the conformance corpus's correct programs; deadlock/: the verifier's deadlock example);
# and run.sh. It refuses to finish above 48 MiB.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/gpu-bundle-build
from=
out=$root/build/gpu-bundle
limit_mib=48
case "${1:-}" in
  "") ;;
  --from)
    from=${2:-}
    if [ -z "$from" ] || [ ! -f "$from/CMakeCache.txt" ]; then
      echo "gpu-bundle: --from: '${from}' is not a configured build folder" >&2
      exit 2
    fi
    build=$(cd "$from" && pwd)
    ;;
  *)
    echo "gpu-bundle: unknown option '$1' (usage: scripts/gpu-bundle.sh [--from BUILD_DIR])" >&2
    exit 2
    ;;
esac

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "gpu-bundle: no nvcc (the CUDA toolkit builds the kernel the bundle runs)" >&2
  exit 2
fi
export PATH=$PATH:/usr/local/cuda/bin

if [ -z "$from" ]; then
  echo "gpu-bundle: configuring $build" >&2
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSYNCOLL_BUNDLE=ON \
    -DSYNCOLL_BUILD_TESTS=ON -DSYNCOLL_BUILD_BENCHES=ON >"$build.configure.log" 2>&1 || {
    tail -20 "$build.configure.log" >&2
    exit 1
  }
fi
echo "gpu-bundle: building gpu_check and cuda_bench in $build" >&2
cmake --build "$build" --target gpu_check cuda_bench

rm -rf "$out"
mkdir -p "$out/lib" "$out/deadlock"
cp "$build/tests/gpu_check" "$build/bench/cuda_bench" "$out/"
# Another build's executables carry its debug information (CI's: -g1), which the GPU run never
# reads and which would take most of the size a device call carries.
[ -z "$from" ] || strip --strip-debug "$out/gpu_check" "$out/cuda_bench"
"$out/gpu_check" write-programs "$out" --conformance "$root/tests/data/conformance/MANIFEST.json"
cp "$root/examples/ir/faulty/d1_head_to_head.xml" "$out/deadlock/"
cp "$root/scripts/gpu-bundle-run.sh" "$out/run.sh"
chmod +x "$out/run.sh"

# Every shared library the executables load beyond the C library and the loader: into lib/,
# which run.sh puts on the library path. The driver (libcuda) is the machine's and never copied.
for exe in "$out/gpu_check" "$out/cuda_bench"; do
  ldd "$exe" | awk '/=> \// { print $3 }' | while read -r lib; do
    case $(basename "$lib") in
      libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*.so.* | libcuda.so.*) ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
done

size_kib=$(du -sk "$out" | cut -f1)
if [ "$size_kib" -gt $((limit_mib * 1024)) ]; then
  echo "gpu-bundle: $out is $((size_kib / 1024)) MiB, over the ${limit_mib} MiB a device call carries" >&2
  exit 1
fi
echo "gpu-bundle: $out ($((size_kib / 1024)) MiB): $(ls "$out/programs" | grep -c '\.xml$') programs;" \
  "run $out/run.sh on a GPU machine, or $out/run.sh --cpu here" >&2
