#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# set.sh: change the link rate and/or packet loss of the emulated cloud while it runs (a job
# in flight keeps its connections). Without --host it changes every host.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

usage() {
  cat <<USAGE
usage: $(basename -- "$0") [--rate RATE] [--loss P] [--host I]
  --rate   per-host link rate each way, tc units (100mbit, 1gbit, off)
  --loss   probability that a packet arriving at a host is dropped (0 to stop)
  --host   change only host I (0-based); default: all hosts
USAGE
}

rate='' loss='' only=''
while (($#)); do
  case $1 in
    --rate) rate=${2:?--rate needs a value}; shift 2 ;;
    --loss) loss=${2:?--loss needs a value}; shift 2 ;;
    --host) only=${2:?--host needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[[ -n $rate || -n $loss ]] || { usage >&2; exit 2; }
[[ -z $rate ]] || ordemo_rate_bps "$rate" >/dev/null
[[ -z $loss ]] || ordemo_check_loss "$loss"
ordemo_need_root
n=$(ordemo_hosts)
if [[ -n $only ]]; then
  if ! [[ $only =~ ^[0-9]+$ ]] || ((only >= n)); then ordemo_die "--host must be 0..$((n - 1))"; fi
  targets=("$only")
else
  mapfile -t targets < <(seq 0 $((n - 1)))
fi

[[ -z $rate ]] || ordemo_set_rate "$rate" "${targets[@]}"
for i in "${targets[@]}"; do
  [[ -z $loss ]] || ordemo_set_loss "$i" "$loss"
  read -r cur_rate cur_loss <"$ORDEMO_STATE/link-$i"
  echo "${rate:-$cur_rate} ${loss:-$cur_loss}" >"$ORDEMO_STATE/link-$i"
  echo "$(ordemo_host_name "$i"): rate ${rate:-$cur_rate} loss ${loss:-$cur_loss}"
done
