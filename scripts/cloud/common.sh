# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash disable=SC2034  # constants for the scripts that source this file
# common.sh: names, addresses and the shaping/loss helpers shared by scripts/cloud/*.sh.
# Sourced, never run. Everything the emulated cloud creates carries the ordemo prefix, so
# down.sh can find and remove it without touching anything else on the machine.

readonly ORDEMO_PREFIX=ordemo
readonly ORDEMO_SWITCH_NS=${ORDEMO_PREFIX}-sw        # holds the bridge and the mpirun "head"
readonly ORDEMO_BRIDGE=br0                           # lives inside ORDEMO_SWITCH_NS
readonly ORDEMO_SUBNET=10.77.0.0/24
readonly ORDEMO_HEAD_IP=10.77.0.1                    # the bridge's own address
readonly ORDEMO_STATE=/run/${ORDEMO_PREFIX}          # cluster size, MTU, current rate/loss
readonly ORDEMO_UTS=${ORDEMO_STATE}/uts              # one persistent UTS namespace per host
readonly ORDEMO_LOSS_CHAIN=ORDEMO_LOSS               # iptables chain inside each host namespace
readonly ORDEMO_MAX_HOSTS=200
readonly ORDEMO_BACKLOG=10000                        # net.core.netdev_max_backlog while up (up.sh)
# MTU of every link (up.sh --mtu): 1500, the usual cloud default, or jumbo frames (9000; AWS
# uses 9001 inside a VPC, GCP allows up to 8896). 9216 is the usual switch maximum.
readonly ORDEMO_DEFAULT_MTU=1500 ORDEMO_MIN_MTU=576 ORDEMO_MAX_MTU=9216
readonly ORDEMO_ETH_HEADER=14   # tbf counts the Ethernet header: a 1500-MTU frame is 1514 bytes
# tbf: the bucket holds ORDEMO_BURST_US of traffic at the configured rate (at least
# ORDEMO_MIN_BURST bytes; empty: ten frames of the MTU or ORDEMO_GSO_BYTES, the larger:
# tbf drops every packet larger than its bucket, and a bucket of a few frames cannot keep the
# link at its rate between timer wakeups). ORDEMO_GSO_BYTES is the largest packet the kernel
# queues whole: a UDP_SEGMENT or TCP GSO send is cut into frames only after the qdisc. tbf cuts
# one that is larger than its bucket when it arrives, but one already queued when the rate
# changes (set.sh replaces the tbf in place) stays whole, can never be sent by a smaller bucket,
# and wedges the link for good: a tail cut from 1 Gbit/s (125 KB bucket) to 90 Mbit/s (15 KB)
# left 252 packets stuck and every TCP connection of that host in backoff.
# The two ends of a link queue differently, as on real hardware: a host's own egress queue holds
# ORDEMO_HOST_QUEUE_BYTES (empty: 1000 frames of the MTU, a NIC's 1000-packet txqueuelen; TCP
# Small Queues keep each socket far below it, so it pushes back, it does not drop), while the
# switch port towards a host holds ORDEMO_QUEUE_MS at the port's rate and tail-drops beyond it,
# a shallow switch buffer where incast loses packets.
readonly ORDEMO_BURST_US=${ORDEMO_BURST_US:-1000}
readonly ORDEMO_MIN_BURST=${ORDEMO_MIN_BURST:-}
readonly ORDEMO_GSO_BYTES=$((64 * 1024 + 2 * 1024))  # 64 KiB of payload and its headers
readonly ORDEMO_QUEUE_MS=${ORDEMO_QUEUE_MS:-10}
readonly ORDEMO_HOST_QUEUE_BYTES=${ORDEMO_HOST_QUEUE_BYTES:-}

ordemo_die() { echo "$(basename -- "$0"): $*" >&2; exit 1; }

ordemo_need_root() {
  [[ $(id -u) -eq 0 ]] || ordemo_die "needs root (network namespaces, tc, iptables)"
}

ordemo_host_name() { echo "${ORDEMO_PREFIX}-h$1"; }    # also the namespace and the hostname
ordemo_host_ip() { echo "10.77.0.$((10 + $1))"; }
ordemo_host_veth() { echo "eth0"; }                   # inside the host namespace
ordemo_port_veth() { echo "p$1"; }                    # bridge side, inside the switch namespace

# Number of hosts of the running cluster, or an error if there is none.
ordemo_hosts() {
  [[ -r $ORDEMO_STATE/hosts ]] || ordemo_die "no emulated cloud is up (run scripts/cloud/up.sh N)"
  cat "$ORDEMO_STATE/hosts"
}

# "1gbit" -> 1000000000. Accepts tc's bit-rate units; "0" or "off" -> 0 (no limit).
ordemo_rate_bps() {
  awk -v r="$1" 'BEGIN {
    if (r == "0" || r == "off") { print 0; exit }
    if (!match(r, /^[0-9]+(\.[0-9]+)?/)) exit 1
    v = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
    m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9
    if (!(u in m) || v <= 0) exit 1
    printf "%.0f\n", v * m[u] }' || ordemo_die "bad rate '$1' (use e.g. 100mbit, 1gbit, 2.5gbit or off)"
}

ordemo_check_mtu() {
  if ! [[ $1 =~ ^[1-9][0-9]*$ ]] || (($1 < ORDEMO_MIN_MTU || $1 > ORDEMO_MAX_MTU)); then
    ordemo_die "bad MTU '$1' (bytes, $ORDEMO_MIN_MTU..$ORDEMO_MAX_MTU: 1500, or 9000 for jumbo frames)"
  fi
}

# MTU of the running cluster. A cloud that up.sh built before --mtu existed runs at the default.
ordemo_mtu() {
  if [[ -r $ORDEMO_STATE/mtu ]]; then cat "$ORDEMO_STATE/mtu"; else echo "$ORDEMO_DEFAULT_MTU"; fi
}

ordemo_check_loss() {
  awk -v p="$1" 'BEGIN { exit !(p ~ /^(0|1|0?\.[0-9]+|[0-9]\.?[0-9]*e-[0-9]+)$/ && p >= 0 && p < 1) }' \
    || ordemo_die "bad loss '$1' (a probability in [0, 1), e.g. 0.01 for 1%)"
}

# Sets the links of hosts <i>... to <rate> both ways: a host's own veth shapes what it sends,
# its bridge port shapes what it receives. A change replaces the tbf in place (a running job
# never sees an unshaped moment, and the drop counters survive); rate off removes it. One tc
# process per namespace: forks are slow when the ranks keep the CPUs busy.
# The bucket and the host queue are sized in frames of the cluster's MTU (ordemo_mtu).
ordemo_set_rate() {
  local rate=$1 bps frame min_burst host_queue burst i ports=
  shift
  bps=$(ordemo_rate_bps "$rate")
  frame=$(($(ordemo_mtu) + ORDEMO_ETH_HEADER))
  min_burst=$((10 * frame > ORDEMO_GSO_BYTES ? 10 * frame : ORDEMO_GSO_BYTES))
  min_burst=${ORDEMO_MIN_BURST:-$min_burst}
  host_queue=${ORDEMO_HOST_QUEUE_BYTES:-$((1000 * frame))}
  ((min_burst >= frame)) \
    || ordemo_die "ORDEMO_MIN_BURST=$min_burst is below one $frame-byte frame: tbf would drop every full-size packet"
  # %.0f, not %d: mawk's %d stops at 2^31.
  burst=$(awk -v b="$bps" -v us="$ORDEMO_BURST_US" -v min="$min_burst" \
    'BEGIN { x = b / 8 * us / 1e6; if (x < min) x = min; printf "%.0f\n", x }')
  for i; do
    if ((bps > 0)); then
      tc -n "$(ordemo_host_name "$i")" qdisc replace dev "$(ordemo_host_veth "$i")" root \
        tbf rate "$bps"bit burst "$burst" limit "$host_queue"
      ports+="qdisc replace dev $(ordemo_port_veth "$i") root tbf rate ${bps}bit burst $burst latency ${ORDEMO_QUEUE_MS}ms"$'\n'
    else
      tc -n "$(ordemo_host_name "$i")" qdisc del dev "$(ordemo_host_veth "$i")" root 2>/dev/null || true
      ports+="qdisc del dev $(ordemo_port_veth "$i") root"$'\n'
    fi
  done
  if ((bps > 0)); then
    printf '%s' "$ports" | tc -n "$ORDEMO_SWITCH_NS" -batch -
  else
    printf '%s' "$ports" | tc -n "$ORDEMO_SWITCH_NS" -force -batch - 2>/dev/null || true
  fi
}

# Host i drops each arriving packet with probability <p> (0: none). The rule sits in the
# host's INPUT chain, after the link, so TCP sees the drops as network loss and retransmits.
# iptables-restore swaps the chain's contents in one step.
ordemo_set_loss() {
  local i=$1 p=$2 rule=
  if awk -v p="$p" 'BEGIN { exit !(p > 0) }'; then
    rule="-A $ORDEMO_LOSS_CHAIN -m statistic --mode random --probability $p -j DROP"
  fi
  printf '*filter\n-F %s\n%s\nCOMMIT\n' "$ORDEMO_LOSS_CHAIN" "$rule" |
    ip netns exec "$(ordemo_host_name "$i")" iptables-restore -w 5 --noflush
}
