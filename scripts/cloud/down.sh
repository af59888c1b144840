#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# down.sh: remove the emulated cloud built by up.sh: its processes, namespaces (with their
# veths, bridge, qdiscs and iptables rules), UTS namespaces, /etc/netns entries and state, and
# put net.core.netdev_max_backlog back.
# Idempotent; safe to run when nothing is up. Touches only ordemo-* objects.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

case ${1:-} in
  "") ;;
  -h|--help) echo "usage: $(basename -- "$0")"; exit 0 ;;
  *) echo "usage: $(basename -- "$0")" >&2; exit 2 ;;
esac
ordemo_need_root

namespaces=$(ip netns list | awk -v p="^$ORDEMO_PREFIX-" '$1 ~ p { print $1 }')

pids_in_namespaces() { # into the array pids
  local ns
  pids=()
  for ns in $namespaces; do mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2>/dev/null || true); done
}

# Processes first: a namespace with processes in it outlives `ip netns del`. SIGCONT wakes
# any rank a straggler.sh left stopped, so it can act on SIGTERM.
pids_in_namespaces
if ((${#pids[@]})); then
  kill -CONT "${pids[@]}" 2>/dev/null || true
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in {1..20}; do
    pids_in_namespaces
    ((${#pids[@]})) || break
    sleep 0.1
  done
  ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
fi

for ns in $namespaces; do ip netns del "$ns"; done

if [[ -d $ORDEMO_UTS ]]; then
  for f in "$ORDEMO_UTS"/*; do
    [[ -e $f ]] || continue
    umount "$f" 2>/dev/null || true
  done
  umount "$ORDEMO_UTS" 2>/dev/null || true
fi
# The one machine-wide setting up.sh changed.
if [[ -r $ORDEMO_STATE/netdev_max_backlog ]]; then
  sysctl -qw net.core.netdev_max_backlog="$(cat "$ORDEMO_STATE/netdev_max_backlog")" || true
fi
rm -rf "$ORDEMO_STATE"
rm -rf /etc/netns/"$ORDEMO_PREFIX"-*
rmdir /etc/netns 2>/dev/null || true   # only if up.sh created it and nothing else uses it
