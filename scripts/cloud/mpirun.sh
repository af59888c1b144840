#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mpirun.sh: run an Open MPI job on the emulated cloud, one rank per emulated host, with all
# MPI traffic (TCP BTL and the launcher's OOB) on 10.77.0.0/24, i.e. across the shaped veths.
#
# mpirun runs in the switch namespace (hostname ordemo-head, which gets no rank) and starts one
# orted per host through rsh-agent.sh, which enters the host's namespaces the way ssh would
# log in. LD_PRELOAD and every OPTIREDUCE_* variable set in the caller's environment reach the
# ranks (as -x NAME=VALUE; LD_PRELOAD is not applied to mpirun and orted themselves). Options
# before `--` go to mpirun unchanged (e.g. -x FOO, --tag-output). Bounded by --timeout; on any
# exit the rank and orted processes this job left on the emulated hosts are killed (only this
# job's: two jobs may share the hosts).
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

usage() {
  cat <<USAGE
usage: $(basename -- "$0") N [--timeout SECONDS] [MPIRUN-OPTIONS...] -- PROGRAM [ARGS...]
  N           ranks, one per emulated host (hosts 0..N-1 of the running cloud)
  --timeout   kill the job after this many seconds (default 600)
USAGE
}

[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
[[ ${1:-} =~ ^[0-9]+$ ]] || { usage >&2; exit 2; }
np=$1; shift
limit=600 mpi_opts=()
while (($#)) && [[ $1 != -- ]]; do
  case $1 in
    --timeout) limit=${2:?--timeout needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) mpi_opts+=("$1"); shift ;;
  esac
done
if [[ ${1:-} != -- ]] || (($# < 2)); then usage >&2; exit 2; fi
shift
[[ $limit =~ ^[1-9][0-9]*$ ]] || ordemo_die "--timeout must be a positive number of seconds"
ordemo_need_root
n=$(ordemo_hosts)
((np >= 1 && np <= n)) || ordemo_die "N must be 1..$n (the cloud has $n hosts)"
launcher=$(command -v mpirun.openmpi || command -v mpirun) || ordemo_die "Open MPI's mpirun not found"
# Open MPI splits plm_rsh_agent on spaces and colons.
[[ $here != *[\ :]* ]] || ordemo_die "the path $here must not contain spaces or colons"

hostfile=$(mktemp "$ORDEMO_STATE/hostfile.XXXXXX")
# This job's mark (see cleanup); unique while this script runs.
export ORDEMO_JOB="$$.${hostfile##*.}"
job=
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  local i ns pids=()
  rm -f "$hostfile"
  # mpirun gets SIGTERM (through timeout) and a few seconds to end the job its own way; what is
  # left after that, e.g. a rank that straggler.sh stopped, is killed.
  if [[ -n $job ]] && kill -TERM "$job" 2>/dev/null; then
    for _ in {1..50}; do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  fi
  # Every process of this job on the emulated hosts and the switch, and nothing else: mpirun,
  # the orteds and the ranks all inherit ORDEMO_JOB from this script, so a second job sharing the
  # hosts (a co-tenant) survives this one's end.
  for ns in "$ORDEMO_SWITCH_NS" $(for ((i = 0; i < n; i++)); do ordemo_host_name "$i"; done); do
    while read -r pid; do
      grep -qxz "ORDEMO_JOB=$ORDEMO_JOB" "/proc/$pid/environ" 2>/dev/null && pids+=("$pid")
    done < <(ip netns pids "$ns" 2>/dev/null || true)
  done
  ((${#pids[@]} == 0)) || { kill -CONT "${pids[@]}"; kill -KILL "${pids[@]}"; } 2>/dev/null || true
}
trap cleanup EXIT
for ((i = 0; i < np; i++)); do echo "$(ordemo_host_name "$i") slots=1 max_slots=1"; done >"$hostfile"

env_opts=()
while IFS= read -r name; do
  env_opts+=(-x "$name=${!name}")
done < <(compgen -e | grep -E '^(LD_PRELOAD|OPTIREDUCE_[A-Za-z0-9_]*)$' || true)
unset LD_PRELOAD
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# --bind-to none: every emulated host reports all of this machine's cores, so Open MPI's
# default binding would pin each host's rank to the same core 0.
# mpi_yield_when_idle 1: the emulated hosts share this machine's few cores, and ranks that spin
# while they wait take the CPU from the rank and the kernel work that would end the wait (on 2
# cores a 1 MiB allreduce on 4 hosts at 1gbit took 65 ms spinning, 29 ms yielding). Set through the
# environment so that `--mca mpi_yield_when_idle 0` given to mpirun.sh overrides it (Open MPI
# refuses a parameter named twice on the command line).
# pml ob1 + btl tcp,self: no UCX or libfabric path that could bypass the emulated links.
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
# In the background so that Ctrl-C or SIGTERM reach this script (and its cleanup) at once:
# timeout puts mpirun in a process group of its own, out of reach of the terminal.
timeout --kill-after=10 "$limit" "$here/exec.sh" head "$launcher" \
  -np "$np" --hostfile "$hostfile" --map-by node --bind-to none \
  --mca plm_rsh_agent "$here/rsh-agent.sh" --mca plm_rsh_no_tree_spawn 1 \
  --mca pml ob1 --mca btl tcp,self \
  --mca btl_tcp_if_include "$ORDEMO_SUBNET" --mca oob_tcp_if_include "$ORDEMO_SUBNET" \
  "${env_opts[@]}" "${mpi_opts[@]}" "$@" <&0 &
job=$!
trap 'exit 130' INT
trap 'exit 143' TERM
status=0
wait "$job" || status=$?
job=
((status != 124)) || echo "$(basename -- "$0"): job killed after $limit s" >&2
exit "$status"
