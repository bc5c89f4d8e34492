#!/usr/bin/env bash
# Installs, with apt-get, whatever upanthor needs to build and test on Debian 12.
# Idempotent: runs `apt-get update` and `apt-get install` only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  libboost-dev libboost-context-dev
  libgtest-dev libgmock-dev libbenchmark-dev libtomlplusplus-dev
  libdrm-dev drm-info
  zlib1g-dev nlohmann-json3-dev
  parallel
  python3
  clang libclang-rt-14-dev zip
  clang-format clang-tidy
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
