#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# up.sh: build an emulated cloud of N hosts on this machine out of network namespaces.
#
# Host i is the network namespace ordemo-h<i> with hostname ordemo-h<i> (a persistent UTS
# namespace, entered by exec.sh), address 10.77.0.(10+i)/24 on eth0, a veth whose other end is
# port p<i> of bridge br0 in the namespace ordemo-sw (the "switch", address 10.77.0.1, where
# mpirun.sh runs the launcher). Nothing is added to the root namespace: no interface, route or
# firewall rule, so the machine's own network is untouched. Each host's link is limited to --rate
# in both directions (tbf) and drops arriving packets with probability --loss (iptables). Change
# both live with set.sh; remove everything with down.sh, which up.sh runs first. Every veth end
# and the bridge carry one MTU, --mtu (1500, or 9000 to emulate jumbo frames), set once here:
# set.sh changes only rate and loss.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

usage() {
  cat <<USAGE
usage: $(basename -- "$0") N [--rate RATE] [--loss P] [--mtu BYTES]
  N          number of hosts, 1..$ORDEMO_MAX_HOSTS
  --rate     per-host link rate each way, tc units (100mbit, 1gbit, 10gbit, off); default 1gbit
  --loss     probability that a packet arriving at a host is dropped; default 0
  --mtu      MTU of every link and of the bridge, $ORDEMO_MIN_MTU..$ORDEMO_MAX_MTU (1500, or 9000 for
             jumbo frames); default $ORDEMO_DEFAULT_MTU
USAGE
}

[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
[[ ${1:-} =~ ^[0-9]+$ ]] || { usage >&2; exit 2; }
n=$1; shift
rate=1gbit loss=0 mtu=$ORDEMO_DEFAULT_MTU
while (($#)); do
  case $1 in
    --rate) rate=${2:?--rate needs a value}; shift 2 ;;
    --loss) loss=${2:?--loss needs a value}; shift 2 ;;
    --mtu) mtu=${2:?--mtu needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
((n >= 1 && n <= ORDEMO_MAX_HOSTS)) || ordemo_die "N must be 1..$ORDEMO_MAX_HOSTS"
ordemo_rate_bps "$rate" >/dev/null
ordemo_check_loss "$loss"
ordemo_check_mtu "$mtu"
ordemo_need_root
for tool in ip tc iptables ethtool nsenter unshare; do
  command -v "$tool" >/dev/null || ordemo_die "$tool not found (apt-get install iproute2 iptables ethtool util-linux)"
done

"$here/down.sh"
# A half-built cloud is worse than none: whatever stops this script before the end removes it.
# The one machine-wide setting: every frame a veth hands to a namespace waits in the backlog of
# one CPU (net.core.netdev_max_backlog, 1000 frames). A NIC puts a segmented send's 44 frames on
# the wire 12 us apart at 1 Gbit/s; a veth delivers them at once, and four hosts' bursts on two
# CPUs overflowed that backlog (149K frames dropped in a few seconds, counted in column 2 of
# /proc/net/softnet_stat), a loss no real link would show. down.sh restores the old value.
built=''
trap '[[ -n $built ]] || "$here/down.sh"' EXIT

# Persistent UTS namespaces are bind-mounted files; the mount they sit on must be private
# (ip netns does the same for /run/netns).
mkdir -p "$ORDEMO_STATE"
sysctl -n net.core.netdev_max_backlog >"$ORDEMO_STATE/netdev_max_backlog"
(($(cat "$ORDEMO_STATE/netdev_max_backlog") >= ORDEMO_BACKLOG)) || sysctl -qw net.core.netdev_max_backlog="$ORDEMO_BACKLOG"
mkdir -p "$ORDEMO_UTS"
mount --bind "$ORDEMO_UTS" "$ORDEMO_UTS"
mount --make-private "$ORDEMO_UTS"

# Name resolution: ip netns exec bind-mounts /etc/netns/<ns>/hosts over /etc/hosts, so every
# emulated host (and the switch) resolves the others without editing the machine's /etc/hosts.
hosts_file=$(mktemp)
{
  printf '127.0.0.1\tlocalhost\n%s\t%s-head\n' "$ORDEMO_HEAD_IP" "$ORDEMO_PREFIX"
  for ((i = 0; i < n; i++)); do printf '%s\t%s\n' "$(ordemo_host_ip "$i")" "$(ordemo_host_name "$i")"; done
} >"$hosts_file"

new_host_ns() { # <netns> <hostname>
  ip netns add "$1"
  ip -n "$1" link set lo up
  # No IPv6: its neighbour discovery would add unrelated packets to the link counters.
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  mkdir -p "/etc/netns/$1"
  cp "$hosts_file" "/etc/netns/$1/hosts"
  touch "$ORDEMO_UTS/$1"
  unshare --uts="$ORDEMO_UTS/$1" hostname "$2"
}

# Every link end gets two settings:
# - offloads off: tbf and the loss rule then act on wire-sized packets (one MTU), not on 64 KiB
#   GSO super-packets, which would make --loss 0.01 drop 1% of super-packets (tens of segments
#   each) rather than 1% of packets. UDP segmentation (tx-udp-segmentation) is a feature of its
#   own: "gso off" leaves it on, and a UDP_SEGMENT send then crossed the bridge as one 64 KiB
#   packet, lost or queued whole, where a NIC puts 44 frames on the wire;
# - RPS over all CPUs: a veth hands each packet to the backlog of the CPU that sends it, so a
#   flow whose sender (or tbf timer) moves between CPUs arrives out of order, and TCP
#   retransmits spuriously (95 retransmits in 5 s at 500mbit with no drop). RPS steers each flow
#   to one CPU by its hash and keeps it in order.
rps_mask=$(c=$(nproc) m=''; while ((c > 32)); do m=,ffffffff$m; c=$((c - 32)); done; printf '%x%s' $(((1 << c) - 1)) "$m")
tune_link() { # <netns> <dev>
  ip netns exec "$1" ethtool -K "$2" tso off gso off gro off tx-udp-segmentation off >/dev/null 2>&1 || true
  ip netns exec "$1" sh -c "echo $rps_mask >/sys/class/net/$2/queues/rx-0/rps_cpus"
}

new_host_ns "$ORDEMO_SWITCH_NS" "$ORDEMO_PREFIX-head"
# Bridged frames need no firewall; br_netfilter (when loaded) would send them through one.
ip netns exec "$ORDEMO_SWITCH_NS" sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null || true
# The bridge gets the MTU explicitly: left alone, it follows its smallest port, and until the
# first port joins it would sit at 1500.
ip -n "$ORDEMO_SWITCH_NS" link add "$ORDEMO_BRIDGE" mtu "$mtu" type bridge
ip -n "$ORDEMO_SWITCH_NS" addr add "$ORDEMO_HEAD_IP/24" dev "$ORDEMO_BRIDGE"
ip -n "$ORDEMO_SWITCH_NS" link set "$ORDEMO_BRIDGE" up

for ((i = 0; i < n; i++)); do
  ns=$(ordemo_host_name "$i") dev=$(ordemo_host_veth "$i") port=$(ordemo_port_veth "$i")
  new_host_ns "$ns" "$ns"
  ip link add name "$dev" mtu "$mtu" netns "$ns" type veth peer name "$port" mtu "$mtu" netns "$ORDEMO_SWITCH_NS"
  ip -n "$ORDEMO_SWITCH_NS" link set "$port" master "$ORDEMO_BRIDGE" up
  ip -n "$ns" addr add "$(ordemo_host_ip "$i")/24" dev "$dev"
  ip -n "$ns" link set "$dev" up
  tune_link "$ns" "$dev"
  tune_link "$ORDEMO_SWITCH_NS" "$port"
  ip netns exec "$ns" iptables -w 5 -N "$ORDEMO_LOSS_CHAIN"
  ip netns exec "$ns" iptables -w 5 -A INPUT ! -i lo -j "$ORDEMO_LOSS_CHAIN"
done
rm -f "$hosts_file"

# Every host must reach the switch before shaping and loss make failures ambiguous. A refused
# TCP connection proves the path works (nothing listens on port 9).
for ((i = 0; i < n; i++)); do
  ns=$(ordemo_host_name "$i")
  out=$(ip netns exec "$ns" timeout 3 bash -c "exec 3<>/dev/tcp/$ORDEMO_HEAD_IP/9" 2>&1 || true)
  [[ $out == *"refused"* ]] || ordemo_die "$ns cannot reach $ORDEMO_HEAD_IP: ${out:-timeout}"
done

# ordemo_set_rate sizes tbf's bucket in frames of this MTU, so it must be on record first.
echo "$mtu" >"$ORDEMO_STATE/mtu"
mapfile -t all < <(seq 0 $((n - 1)))
ordemo_set_rate "$rate" "${all[@]}"
for ((i = 0; i < n; i++)); do ordemo_set_loss "$i" "$loss"; done
echo "$n" >"$ORDEMO_STATE/hosts"
for ((i = 0; i < n; i++)); do echo "$rate $loss" >"$ORDEMO_STATE/link-$i"; done
built=1

echo "emulated cloud up: $n hosts $(ordemo_host_name 0)..$(ordemo_host_name $((n - 1)))" \
  "($(ordemo_host_ip 0)..$(ordemo_host_ip $((n - 1)))), rate $rate, loss $loss, mtu $mtu"
