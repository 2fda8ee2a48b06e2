#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages einfuzz needs (only the missing ones, so a second run is quick),
# then configures and builds the release preset. The CLI ends up at build/einfuzz.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ clang lld cmake ninja-build pkg-config python3
  libgtest-dev libbenchmark-dev librapidcheck-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libgmp-dev libmpfr-dev libeigen3-dev libxtensor-dev
  python3-numpy python3-yaml libclang-rt-14-dev libtorch-dev python3-torch
  chromium fonts-liberation jq
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "einfuzz setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
