#!/usr/bin/env bash
# Installs every build and test dependency of syncoll from Debian 12 packages.
# Idempotent: packages already present are skipped, so a second run does no work.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config clang-format clang libclang-rt-14-dev
  libz3-dev libcadical-dev libboost-graph-dev
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  graphviz libgraphviz-dev librsvg2-bin
  libcli11-dev nlohmann-json3-dev libpugixml-dev libexpected-dev libfmt-dev
  openmpi-bin chromium zlib1g-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
