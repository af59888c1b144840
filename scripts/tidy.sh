#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# clang-tidy on the project's own code (src/ and wrappers/, the headers they include from src/,
# wrappers/ and include/) with the checks in .clang-tidy, every finding an error. CI runs it after
# the sanitizers. Configures build-tidy/ for its compile_commands.json (nothing is built).
#   scripts/tidy.sh                    # everything, ~4 minutes on 2 cores
#   scripts/tidy.sh src/engine/        # the files under one path
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=build-tidy
cmake -S . -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
under=${1:-}
# Each source once (the per-ABI sources are compiled twice, for Open MPI and MPICH: the Open MPI
# entry is the one checked), tests and fetched code excluded.
mapfile -t files < <(python3 - "$build/compile_commands.json" "$PWD/$under" <<'PY'
import json, sys
seen = {}
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if ("/src/" in f or "/wrappers/" in f) and f.startswith(sys.argv[2]) and f not in seen:
        seen[f] = True
print("\n".join(sorted(seen)))
PY
)
echo "tidy.sh: ${#files[@]} files"
# run-clang-tidy exits non-zero when any file has a finding (WarningsAsErrors: all of them).
log=$build/tidy.log
status=0
run-clang-tidy -p "$build" -quiet -j "$(nproc)" "${files[@]}" >"$log" 2>&1 || status=$?
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E -A3 "(error|warning): " || true
if [ "$status" = 0 ]; then echo "tidy.sh: clean"; else echo "tidy.sh: findings above (full log: $log)"; fi
exit "$status"
