#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# find_package(optireduce) from the install prefix alone: configure, build and run a consumer.
set -euo pipefail
prefix=$1 work=$2 src=$3 with_mpich=$4 version=$5
rm -rf "$work"
cmake -S "$src" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DWITH_MPICH="$with_mpich" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
cmake --build "$work"
out=$("$work/consumer")
echo "$out"
[[ $out == "optireduce $version (Open MPI)" ]] || { echo "unexpected output: $out"; exit 1; }
if [[ $with_mpich == ON ]]; then
  out=$("$work/consumer-mpich")
  echo "$out"
  [[ $out == "optireduce $version (MPICH)" ]] || { echo "unexpected output: $out"; exit 1; }
fi
