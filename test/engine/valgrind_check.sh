#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a 2-rank job under valgrind with the library preloaded and fails if any valgrind report
# (leak, invalid access, uninitialised use) has a frame in optireduce. Open MPI's own
# allocations that it never frees are not ours to judge and are ignored.
# usage: valgrind_check.sh <mpirun> <liboptireduce.so> <program> <workdir> [mode]
set -euo pipefail
mpirun=$1 lib=$2 prog=$3 dir=$4
export OPTIREDUCE_MODE=${5:-exact} OPTIREDUCE_DGRAM_PROVIDER=kernel  # the datagram channel, even on one node
rm -rf "$dir" && mkdir -p "$dir"
OPTIREDUCE_MIN_BYTES=0 "$mpirun" --oversubscribe -np 2 -x LD_PRELOAD="$lib" -x OPTIREDUCE_MIN_BYTES -x OPTIREDUCE_MODE -x OPTIREDUCE_DGRAM_PROVIDER \
  valgrind --leak-check=full --show-leak-kinds=definite,indirect --num-callers=40 \
  --suppressions="$(dirname "$0")/valgrind.supp" \
  --log-file="$dir/vg.%p.log" "$prog"
logs=("$dir"/vg.*.log)
[ -e "${logs[0]}" ] || { echo "FAIL: valgrind wrote no logs"; exit 1; }
# Split each log into records (blank-line separated) and keep those naming our code.
bad=$(awk 'BEGIN{RS="==[0-9]+== \n"} /liboptireduce|optireduce::/ {print; print "----"}' "${logs[@]}")
if [ -n "$bad" ]; then
  echo "FAIL: valgrind reports involving optireduce:"
  echo "$bad"
  exit 1
fi
grep -h "ERROR SUMMARY" "${logs[@]}"
echo "PASS: no valgrind report involves optireduce (${#logs[@]} ranks)"
