#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rsh-agent.sh: Open MPI's remote-shell agent for the emulated cloud (mpirun.sh passes it as
# plm_rsh_agent). Called like ssh, `rsh-agent.sh HOST WORDS...`, where the words form one shell
# command line (the orted invocation, already quoted for a shell); runs it on HOST via exec.sh.
set -euo pipefail
here=$(cd "$(dirname -- "$0")" && pwd)
(($# >= 2)) || { echo "usage: $(basename -- "$0") HOST COMMAND-WORDS..." >&2; exit 2; }
host=$1; shift
exec "$here/exec.sh" "$host" /bin/sh -c "$*"
