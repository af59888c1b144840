#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every source file of the project carries the licence's SPDX line (LICENSE has the text):
#   scripts/spdx.sh check   list the files without it; exit 1 if there is any
#   scripts/spdx.sh add     put it at the top of those files (after a #! line), in their comment style
# Sources: C, C++, Fortran, Python, shell, CMake and pkg-config templates, the launcher script and
# CI's entry point; not docs/, test data (fuzz corpus, mutation patches) or generated files.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly line='SPDX-License-Identifier: BSD-3-Clause'
mode=${1:-check}
case "$mode" in check|add) ;; *) echo "usage: scripts/spdx.sh [check|add]" >&2; exit 2 ;; esac

sources() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files; else find . -type f -printf '%P\n'; fi |
    grep -E '\.(c|cpp|h|hpp|f90|py|sh|cmake|in)$|(^|/)CMakeLists\.txt$|^scripts/optireduce-run$|^\.ci/run$' |
    grep -Ev '^(docs|test/fuzz/corpus|test/mutations)/|^build'
}

comment_for() {
  case "$1" in
    *.c|*.h) echo "/* $line */" ;;
    *.cpp|*.hpp) echo "// $line" ;;
    *.f90) echo "! $line" ;;
    *) echo "# $line" ;;
  esac
}

missing=0
while IFS= read -r f; do
  head -n 3 "$f" | grep -q "$line" && continue
  if [ "$mode" = check ]; then
    echo "no SPDX line: $f (scripts/spdx.sh add puts it in)"
    missing=1
    continue
  fi
  c=$(comment_for "$f")
  if head -n 1 "$f" | grep -q '^#!'; then
    { head -n 1 "$f"; echo "$c"; tail -n +2 "$f"; } >"$f.spdx"
  else
    { echo "$c"; cat "$f"; } >"$f.spdx"
  fi
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
done < <(sources)
exit "$missing"
