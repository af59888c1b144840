#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# stats.sh: one line per emulated host with the counters that show what the network did:
# bytes and packets through its veth, packets tbf dropped (queue full) in each direction,
# packets the loss rule dropped, and the host's TCP segments sent and retransmitted.
# Counters are cumulative since up.sh (the tbf drops since the rate was last off); diff two
# snapshots to measure one job.
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
n=$(ordemo_hosts)

tbf_drops() { # <netns> <dev>: packets the tbf dropped since it was (re)configured
  tc -s -n "$1" qdisc show dev "$2" | awk 'match($0, /dropped [0-9]+/) { d = substr($0, RSTART + 8, RLENGTH - 8) } END { print d + 0 }'
}

printf '%-10s %-8s %-6s %14s %14s %10s %10s %11s %11s %9s %12s %11s\n' \
  host rate loss tx_bytes rx_bytes tx_pkts rx_pkts tbf_drop_tx tbf_drop_rx loss_drop tcp_out_segs tcp_retrans
for ((i = 0; i < n; i++)); do
  ns=$(ordemo_host_name "$i") dev=$(ordemo_host_veth "$i") port=$(ordemo_port_veth "$i")
  read -r rate loss <"$ORDEMO_STATE/link-$i"
  read -r txb rxb txp rxp < <(ip netns exec "$ns" sh -c \
    "cd /sys/class/net/$dev/statistics && echo \$(cat tx_bytes rx_bytes tx_packets rx_packets)")
  loss_drop=$(ip netns exec "$ns" iptables -w 5 -nvxL "$ORDEMO_LOSS_CHAIN" | awk '$3 == "DROP" { s += $1 } END { print s + 0 }')
  # shellcheck disable=SC2016  # awk program
  read -r out_segs retrans < <(ip netns exec "$ns" awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["OutSegs"], $c["RetransSegs"] }' /proc/net/snmp)
  printf '%-10s %-8s %-6s %14d %14d %10d %10d %11d %11d %9d %12d %11d\n' "$ns" "$rate" "$loss" \
    "$txb" "$rxb" "$txp" "$rxp" "$(tbf_drops "$ns" "$dev")" "$(tbf_drops "$ORDEMO_SWITCH_NS" "$port")" \
    "$loss_drop" "$out_segs" "$retrans"
done
