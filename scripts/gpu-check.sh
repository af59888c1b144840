#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# gpu-check.sh: the GPU-buffer check on a real NVIDIA GPU (the test suite runs the same program on
# a fake CUDA driver; this is the check that the fake cannot stand in for).
#
# usage: scripts/gpu-check.sh [BUILD_DIR] [NP]
#
# Needs: an NVIDIA GPU with its driver (libcuda.so.1 loadable: nvidia-smi works), Open MPI's
# mpirun, and a build of this project in BUILD_DIR (default build/; scripts/test.sh makes one).
# No CUDA toolkit is needed: the check program loads the driver itself, as PyTorch does.
# Runs NP (default 2) local ranks with the library preloaded and device buffers through each
# case of test/device/device_check.c that needs no CUDA-aware MPI (device, inplace, managed,
# mixed, iallreduce, late), then the 64 MiB bench: device buffers against host buffers, side by
# side in one job. Prints the bench line and the ratio against the target (device time at most
# 1.2x host time). Exit status: 0 every case passed and the ratio is within the target; 1 a
# case failed or the ratio is above it; 2 the machine cannot run the check (reason printed).
set -euo pipefail
cd "$(dirname -- "$0")/.."
build=${1:-build}
np=${2:-2}
prog=$build/test/device/optireduce_device_check
lib=$build/src/liboptireduce.so
for f in "$prog" "$lib"; do
  [[ -e $f ]] || { echo "gpu-check.sh: $f missing: build the project first (scripts/test.sh)" >&2; exit 2; }
done
if ! python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  echo "gpu-check.sh: libcuda.so.1 cannot be loaded: this machine has no NVIDIA driver" >&2
  exit 2
fi
launcher=$(command -v mpirun.openmpi || command -v mpirun) || {
  echo "gpu-check.sh: mpirun not found (install openmpi-bin)" >&2
  exit 2
}
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {
  "$launcher" --oversubscribe -np "$np" -x LD_PRELOAD="$(realpath "$lib")" -x OPTIREDUCE_MIN_BYTES=0 \
    -x OPTIREDUCE_DGRAM_PROVIDER=kernel "$@"
}
failed=0
for c in device inplace managed mixed iallreduce late; do
  start=$(date +%s%N)
  if out=$(run "$prog" "$c" 2>&1) && grep -q "^PASS $c\$" <<<"$out" && ! grep -q "^FAIL" <<<"$out"; then
    printf 'PASS %-12s %6d ms\n' "$c" $((($(date +%s%N) - start) / 1000000))
  else
    printf 'FAIL %s\n%s\n' "$c" "$out"
    failed=1
  fi
done
for mode in bounded exact; do
  out=$(run -x OPTIREDUCE_MODE=$mode "$prog" bench 2>&1) || { echo "FAIL bench ($mode)"; echo "$out"; failed=1; continue; }
  line=$(grep '^BENCH' <<<"$out") || { echo "FAIL bench ($mode): no BENCH line"; echo "$out"; failed=1; continue; }
  ratio=$(sed -n 's/.*ratio=\([0-9.]*\).*/\1/p' <<<"$line")
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.2 ? "within" : "ABOVE") }')
  echo "$mode: $line: $verdict the 1.2x target"
  [[ $verdict == within ]] || failed=1
done
exit $failed
