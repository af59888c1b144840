#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench-channel.sh: optireduce-channel-bench, the throughput and CPU cost of each datagram channel
# (the kernel UDP channel with and without GSO/GRO, libfabric's udp) next to a TCP stream, between
# two processes. When the emulated cloud is up (scripts/cloud/up.sh, as root) the server runs on
# host 0 and the client on host 1, so the data crosses the cloud's shaped links; otherwise both
# run on this machine's loopback (--loopback). ARGS go to the client: --channels, --bytes, --mtu,
# --json (optireduce-channel-bench --help). Prints the client's table.
#   usage: scripts/bench-channel.sh [BUILD_DIR] [ARGS...]
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/cloud/common.sh"
build=$here/../build
if (($#)) && [[ $1 != -* ]]; then build=$1; shift; fi
bench=$(readlink -f -- "$build")/src/tools/channel/optireduce-channel-bench
[[ -x $bench ]] || { echo "build first: $bench is missing" >&2; exit 1; }

if ! [[ $(id -u) -eq 0 && -r $ORDEMO_STATE/hosts && $(cat "$ORDEMO_STATE/hosts") -ge 2 ]]; then
  echo "== no emulated cloud is up (or not root): client and server on loopback"
  exec "$bench" --loopback "$@"
fi

port=18515
server_log=$(mktemp)
echo "== emulated cloud: server on $(ordemo_host_name 0) ($(ordemo_host_ip 0)), client on $(ordemo_host_name 1)"
"$here/cloud/exec.sh" 0 "$bench" --server --port "$port" 2>"$server_log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$server_log"' EXIT
# The client must not connect before the server listens.
for _ in $(seq 50); do
  grep -q "listening on port" "$server_log" && break
  kill -0 "$server" 2>/dev/null || { cat "$server_log" >&2; exit 1; }
  sleep 0.1
done
rc=0
"$here/cloud/exec.sh" 1 "$bench" --client "$(ordemo_host_ip 0):$port" "$@" || rc=$?
# The server ends when the client closes the control link; one still running after that never
# met the client (a usage error, --help) and is stopped. Its complaints explain a failure.
for _ in $(seq 20); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
if kill "$server" 2>/dev/null; then
  wait "$server" 2>/dev/null || true
elif ! wait "$server"; then
  rc=1
  cat "$server_log" >&2
fi
exit "$rc"
