#!/usr/bin/env bash
# Keeps CPUs busy, to run the test suite as a loaded CI runner would (docs/testing.md).
#
#   scripts/cpu-hog.sh SECONDS [LOOPS] [-- COMMAND ...]
#
# Starts LOOPS busy loops (default: one per CPU, `nproc`) in a process group of their own that
# ends by itself after SECONDS whatever happens to this script (GNU timeout signals its whole
# group). With a COMMAND, runs it meanwhile, stops the loops (by that group's id only) as soon
# as it ends, prints its wall time and exits with its status. Without one, returns at once and
# prints the group's id: `kill -- -<id>` stops the loops sooner.
set -euo pipefail

if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ]; then
  echo "usage: $0 SECONDS [LOOPS] [-- COMMAND ...]" >&2
  exit 2
fi
seconds=$1
shift
loops=$(nproc)
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  if ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ]; then
    echo "LOOPS must be a positive integer (got $1)" >&2
    exit 2
  fi
  loops=$1
  shift
fi
[ "${1:-}" = "--" ] && shift

# setsid: a session and process group of its own, led by timeout (whose pid is $!), so that
# the loops can be stopped by group without touching anything else.
setsid timeout "$seconds" bash -c \
  "for _ in \$(seq $loops); do (while :; do :; done) & done; wait" </dev/null >/dev/null 2>&1 &
group=$!
echo "cpu-hog: $loops busy loop(s) for at most ${seconds} s, process group $group" >&2

if [ $# -eq 0 ]; then
  exit 0
fi

stop() { kill -TERM -- "-$group" 2>/dev/null || true; }
trap stop EXIT
started=$(date +%s)
status=0
"$@" || status=$?
ended=$(date +%s)
echo "cpu-hog: '$*' took $((ended - started)) s under $loops busy loop(s), exit status $status" >&2
exit "$status"
