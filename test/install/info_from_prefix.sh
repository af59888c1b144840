#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The installed optireduce-info runs from the prefix, finds the installed library (not the build
# tree's) through its RPATH, and sees the MPICH build next to it when there is one.
set -euo pipefail
prefix=$1 libdir=$2 version=$3 with_mpich=$4
info=$prefix/bin/optireduce-info
out=$(env -u LD_LIBRARY_PATH "$info")
echo "$out"
lib=$(realpath "$prefix/$libdir")
grep -qx "optireduce $version" <<<"$out" || { echo "no version line"; exit 1; }
grep -q "library  *$lib/liboptireduce.so" <<<"$out" || { echo "library not from $lib"; exit 1; }
grep -q "built for  *Open MPI" <<<"$out" || { echo "wrong ABI"; exit 1; }
if [[ $with_mpich == ON ]]; then
  grep -q "MPICH build  *$lib/liboptireduce-mpich.so" <<<"$out" || { echo "MPICH build not seen"; exit 1; }
fi
"$info" --json | python3 -c 'import json, sys; json.load(sys.stdin)' || { echo "--json is not JSON"; exit 1; }
