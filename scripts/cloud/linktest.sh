#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# linktest.sh: measure the TCP goodput between two emulated hosts, to check that the links run
# at the rate set by up.sh/set.sh. One stream from host FROM to host TO for SECONDS; prints the
# receiver's count in Mbit/s. Needs python3 (no iperf3 required).
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

usage() { echo "usage: $(basename -- "$0") [--from I] [--to J] [--seconds S]   (default 0 -> 1, 5 s)"; }
from=0 to=1 secs=5
while (($#)); do
  case $1 in
    --from) from=${2:?}; shift 2 ;;
    --to) to=${2:?}; shift 2 ;;
    --seconds) secs=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if ! [[ $from =~ ^[0-9]+$ && $to =~ ^[0-9]+$ && $secs =~ ^[0-9]+$ ]] || ((from == to || secs == 0)); then
  usage >&2; exit 2
fi
ordemo_need_root
n=$(ordemo_hosts)
((from < n && to < n)) || ordemo_die "hosts are 0..$((n - 1))"
command -v python3 >/dev/null || ordemo_die "python3 not found"
port=5201 dst=$(ordemo_host_ip "$to")

receiver=$(cat <<'PY'
import socket, sys, time
srv = socket.create_server((sys.argv[1], int(sys.argv[2])))
srv.settimeout(float(sys.argv[3]))
conn, _ = srv.accept()
conn.settimeout(float(sys.argv[3]))
buf = bytearray(1 << 20)
total, t0 = 0, time.monotonic()
while (got := conn.recv_into(buf)):
    total += got
dt = time.monotonic() - t0
print(f"{total / dt * 8 / 1e6:.1f} Mbit/s ({total} bytes in {dt:.2f} s)")
PY
)
sender=$(cat <<'PY'
import socket, sys, time
conn = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
buf, end = bytes(1 << 20), time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    conn.sendall(buf)
conn.close()
PY
)

limit=$((secs + 30))
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout "$limit" "$here/exec.sh" "$to" python3 -c "$receiver" "$dst" "$port" "$limit" >"$out" &
rx=$!
# The receiver is listening once its port shows up.
for _ in {1..50}; do
  "$here/exec.sh" "$to" ss -Hltn "sport = :$port" | grep -q . && break
  sleep 0.1
done
timeout "$limit" "$here/exec.sh" "$from" python3 -c "$sender" "$dst" "$port" "$secs"
wait "$rx" || ordemo_die "receiver failed"
echo "$(ordemo_host_name "$from") -> $(ordemo_host_name "$to"): $(cat "$out")"
