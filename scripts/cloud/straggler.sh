#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# straggler.sh: make ranks straggle. Every period, with probability P, stop one randomly chosen
# process matching PATTERN (SIGSTOP) for DELAY ms, then continue it (SIGCONT). Runs for
# DURATION seconds at most; whatever ends it (time, Ctrl-C, SIGTERM, an error), a process it
# stopped is continued. Logs each pause to stderr.
#
# PATTERN is a pgrep regular expression matched against the process name (at most 15
# characters, e.g. the benchmark binary: it picks the ranks, not mpirun or orted), or with
# --full against the whole command line. While an emulated cloud is up only processes on its
# hosts are candidates (so --full never picks mpirun.sh or this script); without one, any
# matching process is, except this script, its parent and its subshells.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$here/common.sh"

usage() {
  cat <<USAGE
usage: $(basename -- "$0") --delay-ms D --prob P --duration S [--period-ms T] [--full] -- PATTERN
  --delay-ms   how long a chosen process stays stopped
  --prob       probability, each period, that one process is stopped (0..1)
  --duration   stop after this many seconds
  --period-ms  length of a period (default: 1000, and never shorter than --delay-ms)
  --full       match PATTERN against full command lines instead of process names
Only processes on the emulated hosts are stopped while the cloud is up.
USAGE
}

delay='' prob='' duration='' period=1000 full=()
while (($#)) && [[ $1 != -- ]]; do
  case $1 in
    --delay-ms) delay=${2:?}; shift 2 ;;
    --prob) prob=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --period-ms) period=${2:?}; shift 2 ;;
    --full) full=(-f); shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if (($# != 2)) || [[ $1 != -- || -z $2 ]] \
  || ! [[ $delay =~ ^[0-9]+$ && $duration =~ ^[0-9]+$ && $period =~ ^[1-9][0-9]*$ ]]; then
  usage >&2; exit 2
fi
pattern=$2
# P as a threshold on a 30-bit random number.
threshold=$(awk -v p="$prob" 'BEGIN { if (p !~ /^[0-9.]+$/ || p < 0 || p > 1) exit 1; printf "%d\n", p * 1073741824 }') \
  || ordemo_die "--prob must be in [0, 1]"
((period >= delay)) || period=$delay

# Forks are slow on a loaded machine, so time keeping uses builtins only.
now_ms() { local t=${EPOCHREALTIME/./}; now=$((t / 1000)); }
# Sleeps with the read builtin on a pipe nobody writes: no fork, so a pause lasts DELAY and not
# DELAY plus the time to start sleep(1) on a busy machine, and a signal runs its trap at once.
exec {never}<> <(:)
nap_ms() {
  local secs
  printf -v secs '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
  read -rt "$secs" -u "$never" || true
}

# Candidates: processes in an emulated host's network namespace, compared by inode (-ef), so
# with no fork per process. host_of sets $host to the namespace's name.
host_ns=()
if [[ -r $ORDEMO_STATE/hosts ]]; then
  read -r n <"$ORDEMO_STATE/hosts"
  for ((i = 0; i < n; i++)); do host_ns+=("$(ordemo_host_name "$i")"); done
fi
# Without a cloud: anything but this script, its parent and its own subshells (which carry its
# command line, so --full would match them).
not_us() {
  local stat
  (($1 != $$ && $1 != PPID)) || return 1
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  read -r _ ppid _ <<<"$stat"
  ((ppid != $$))
}
host_of() {
  host=
  ((${#host_ns[@]})) || { not_us "$1"; return; }
  for host in "${host_ns[@]}"; do [[ /proc/$1/ns/net -ef /run/netns/$host ]] && return 0; done
  return 1
}

stopped=
resume() { [[ -z $stopped ]] || kill -CONT "$stopped" 2>/dev/null || true; stopped=; }
trap resume EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Periods are laid on a fixed grid from the start, so slow forks on a busy machine do not
# stretch them.
now_ms; start=$now
end=$((start + duration * 1000)) tick=$start pauses=0
while ((tick < end)); do
  if (((RANDOM << 15 | RANDOM) < threshold)); then
    pids=()
    for pid in $(pgrep "${full[@]}" -- "$pattern" || true); do
      host_of "$pid" && pids+=("$pid")
    done
    if ((${#pids[@]})); then
      pid=${pids[RANDOM % ${#pids[@]}]}
      now_ms; t=$now stay=$delay
      ((t + stay <= end)) || stay=$((end - t))
      if ((stay > 0)) && kill -STOP "$pid" 2>/dev/null; then
        stopped=$pid
        nap_ms "$stay"
        resume
        pauses=$((pauses + 1))
        host_of "$pid" || true
        printf 'straggler: t=%d.%03ds stopped pid %d%s for %d ms\n' $(((t - start) / 1000)) \
          $(((t - start) % 1000)) "$pid" "${host:+ on $host}" "$stay" >&2
      fi
    fi
  fi
  tick=$((tick + period))
  now_ms
  left=$((tick < end ? tick : end)); left=$((left - now))
  ((left <= 0)) || nap_ms "$left"
done
echo "straggler: $pauses pauses in $duration s" >&2
