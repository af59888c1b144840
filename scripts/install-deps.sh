#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages optireduce needs to build, test and benchmark, skipping the
# ones already present (so a second run costs nothing and needs no network).
set -euo pipefail
pkgs=(build-essential cmake pkg-config gfortran git python3
      libopenmpi-dev openmpi-bin libmpich-dev mpich
      libfabric-dev libfabric-bin libhwloc-dev hwloc
      libgtest-dev valgrind clang libclang-rt-14-dev clang-tidy iproute2 iptables ethtool
      python3-numpy python3-torch python3-mpi4py python3-sklearn python3-matplotlib)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
