#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# pkg-config from the install prefix alone: compile, link and run the consumer for each .pc.
set -euo pipefail
prefix=$1 work=$2 src=$3 libdir=$4 version=$5
shift 5
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
rm -rf "$work" && mkdir -p "$work"
for pc in "$@"; do
  [[ $(pkg-config --modversion "$pc") == "$version" ]] || { echo "$pc: wrong version"; exit 1; }
  # shellcheck disable=SC2046  # pkg-config output is a list of flags by design
  cc -o "$work/$pc" "$src" $(pkg-config --cflags --libs "$pc")
  abi=$([[ $pc == optireduce-mpich ]] && echo MPICH || echo "Open MPI")
  out=$(LD_LIBRARY_PATH=$prefix/$libdir "$work/$pc")
  echo "$pc: $out"
  [[ $out == "optireduce $version ($abi)" ]] || { echo "unexpected output: $out"; exit 1; }
done
