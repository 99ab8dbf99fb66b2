#!/bin/sh
# A stand-in for ssh in the GUI runner's tests: takes ssh's options, makes the -R forward a
# symlink from the "remote" socket path to the local socket (connecting through it reaches the
# runner's EventChannel, as sshd's forward would), then runs the remote command here with the
# runner's stdin, as sshd would. The real ssh path is tested in tests/app/cli/cli_ssh_test.sh.
remote=""
local=""
while [ $# -gt 1 ]; do
  case "$1" in
    -R) remote="${2%%:*}"; local="${2#*:}"; shift 2 ;;
    -o|-p|-l|-F|-J) shift 2 ;;
    -*) shift ;;
    *) shift; break ;;  # the host
  esac
done
[ -n "$remote" ] && ln -sf "$local" "$remote"
exec sh -c "$*"
