#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# exec.sh: run a command on one emulated host: inside its network namespace, with its hostname
# (UTS namespace) and its /etc/hosts. HOST is 3, h3 or ordemo-h3 for a host, or head for the
# switch namespace, where mpirun.sh runs the launcher.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

if (($# < 2)) || [[ $1 == -h || $1 == --help ]]; then
  echo "usage: $(basename -- "$0") HOST COMMAND [ARGS...]   (HOST: 3, h3, $ORDEMO_PREFIX-h3 or head)" >&2
  [[ ${1:-} == -h || ${1:-} == --help ]] && exit 0
  exit 2
fi
host=$1; shift
case $host in
  head | "$ORDEMO_PREFIX-head") ns=$ORDEMO_SWITCH_NS ;;
  [0-9]*) ns=$(ordemo_host_name "$host") ;;
  h[0-9]*) ns=$ORDEMO_PREFIX-$host ;;
  *) ns=$host ;;
esac
[[ -e /run/netns/$ns && -e $ORDEMO_UTS/$ns ]] || ordemo_die "no emulated host '$host' (is the cloud up?)"
exec ip netns exec "$ns" nsenter --uts="$ORDEMO_UTS/$ns" -- "$@"
