#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/configuration.md's generated section must equal `optireduce-info --config-markdown`
# byte for byte, so the reference can never drift from the knob table in src/config.
#   config_doc.sh check|write OPTIREDUCE_INFO DOC [BUILD_DIR]
set -euo pipefail
action=$1 info=$2 doc=$3 build=${4:-build}
begin='<!-- BEGIN GENERATED -->'
end='<!-- END GENERATED -->'

for marker in "$begin" "$end"; do
  [[ $(grep -cxF -- "$marker" "$doc") == 1 ]] || { echo "$doc: need exactly one line '$marker'"; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The reference is independent of the caller's environment, but be sure of it.
env -i PATH="$PATH" "$info" --config-markdown >"$tmp/generated"

if [[ $action == write ]]; then
  # Everything up to and including BEGIN, the table, END and everything after it.
  { sed -n "1,/^$begin\$/p" "$doc"; cat "$tmp/generated"; sed -n "/^$end\$/,\$p" "$doc"; } >"$tmp/new"
  cp "$tmp/new" "$doc"
  echo "updated $doc"
  exit 0
fi

sed -n "/^$begin\$/,/^$end\$/{/^$begin\$/d;/^$end\$/d;p}" "$doc" >"$tmp/documented"
if ! cmp -s "$tmp/generated" "$tmp/documented"; then
  echo "$doc is out of date with the knob table (src/config/config.cpp):"
  diff -u --label "$doc (generated section)" --label "optireduce-info --config-markdown" \
    "$tmp/documented" "$tmp/generated" || true
  echo
  echo "Regenerate it with:  cmake --build $build --target update-config-doc"
  exit 1
fi
echo "$doc matches optireduce-info --config-markdown"
