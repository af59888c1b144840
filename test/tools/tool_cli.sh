#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A tool's --version and --help, as a user runs them:
#   --version prints one line, "NAME (optireduce) VERSION" with the project's version, exit 0;
#   --help exits 0, its last paragraph is the "Exit status" section, it names every MENTION and
#   no ABSENT text (the library and launcher syntax of the tool's own MPI, not the other's).
#
#   tool_cli.sh NAME VERSION [--mentions TEXT]... [--absent TEXT]... -- COMMAND [ARGS...]
set -euo pipefail
name=$1 version=$2
shift 2
mentions=() absent=()
while (($#)); do
  case "$1" in
    --mentions) mentions+=("$2"); shift 2 ;;
    --absent) absent+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "tool_cli.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
(($#)) || { echo "tool_cli.sh: no command" >&2; exit 2; }

fail() {
  printf 'FAIL %s: %s\n' "$name" "$*"
  exit 1
}

rc=0
out=$("$@" --version) || rc=$?
((rc == 0)) || fail "--version exited $rc (want 0); it printed: $out"
want="$name (optireduce) $version"
[[ $out == "$want" ]] || fail "--version printed '$out', want '$want'"
echo "ok: --version: $out"

rc=0
help=$("$@" --help) || rc=$?
((rc == 0)) || fail "--help exited $rc (want 0)"
# The last paragraph (after the last blank line) is the Exit status section.
last=$(awk 'BEGIN { RS = "" } { p = $0 } END { print p }' <<<"$help")
[[ $last == "Exit status"* ]] || fail "--help does not end with an 'Exit status' section; it ends: $last"
grep -Eq '^ +0 ' <<<"$last" || fail "the Exit status section lists no status 0: $last"
echo "ok: --help ends with its exit statuses:"
echo "$last"
for text in "${mentions[@]}"; do
  grep -Fq -- "$text" <<<"$help" || fail "--help does not mention '$text'"
  echo "ok: --help mentions '$text'"
done
for text in "${absent[@]}"; do
  ! grep -Fq -- "$text" <<<"$help" || fail "--help mentions '$text', which is not this tool's: $(grep -F -- "$text" <<<"$help")"
  echo "ok: --help does not mention '$text'"
done
echo "PASS $name"
