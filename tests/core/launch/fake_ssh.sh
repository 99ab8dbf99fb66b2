#!/bin/sh
# A stand-in for ssh in the runners' tests (the GUI's TrialRunner and the headless run_trial):
# takes ssh's options, makes the -R forward a symlink from the "remote" socket path to the local
# socket (connecting through it reaches the runner's event channel, as sshd's forward would), then
# runs the remote command here with the runner's stdin, as sshd would. The real ssh path is tested
# in tests/app/cli/cli_ssh_test.sh.
#
# TUNEBENCH_FAKE_SSH_LOSE=HOST: the connection to HOST is lost at once (ssh's status 255 and its
# last words on stderr), before the node's ranks report anything.
remote=""
local=""
host=""
while [ $# -gt 1 ]; do
  case "$1" in
    -R) remote="${2%%:*}"; local="${2#*:}"; shift 2 ;;
    -o|-p|-l|-F|-J) shift 2 ;;
    -*) shift ;;
    *) host="$1"; shift; break ;;
  esac
done
if [ -n "$host" ] && [ "$host" = "${TUNEBENCH_FAKE_SSH_LOSE:-}" ]; then
  echo "Connection to $host closed by remote host." >&2
  exit 255
fi
[ -n "$remote" ] && ln -sf "$local" "$remote"
exec sh -c "$*"
