#!/usr/bin/env bash
# The ssh launcher end to end, with real parts: an OpenSSH server started here on a loopback port
# (its own host key, an authorized key made for the test, `ssh -F` a generated client config), and
# a 2-node DDP trial on the CPU over Gloo across two "hosts", 127.0.0.1 and 127.0.0.2, run by
# `tunebench-cli run --launcher ssh` with the real worker. Events come back through `ssh -R`.
#   1. the trial runs to its end: both ranks' steps are in the session, each rank on its node;
#   2. Stop (SIGINT to the CLI) ends every remote rank, the trial is 'stopped' and keeps its steps;
#   3. a remote rank killed with SIGKILL fails the trial with that rank and signal named, and the
#      other node's rank is ended too.
# Skips (exit 77) when sshd is not installed. Usage: $0 CLI WORKER
set -euo pipefail
cli="$1"
worker="$2"
sshd=/usr/sbin/sshd
[ -x "$sshd" ] || { echo "SKIP: $sshd is not installed (apt-get install openssh-server)"; exit 77; }
dir="$(mktemp -d /tmp/tunebench-ssh-test.XXXXXX)"
cleanup() {
  [ -f "$dir/sshd.pid" ] && kill "$(cat "$dir/sshd.pid")" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- sshd log" >&2; tail -n 30 "$dir/sshd.log" >&2 || true
  exit 1
}

user="$(id -un)"
ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$dir/id"
cp "$dir/id.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
mkdir -p /run/sshd 2>/dev/null || true  # privilege separation directory (root)
cat > "$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
ListenAddress 127.0.0.2
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowStreamLocalForwarding yes
X11Forwarding no
LogLevel VERBOSE
CONF
cat > "$dir/ssh_config" <<CONF
Host *
  User $user
  Port $port
  IdentityFile $dir/id
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking accept-new
  LogLevel ERROR
CONF
"$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log"
for _ in $(seq 50); do [ -f "$dir/sshd.pid" ] && break; sleep 0.1; done
[ -f "$dir/sshd.pid" ] || fail "sshd did not start"
ssh -F "$dir/ssh_config" -o BatchMode=yes 127.0.0.2 true || fail "the test's own ssh login does not work"

session="$dir/s.tbsession"
common=(--preset cpu-tiny --set world_size=2 --set strategy=ddp --set warmup=1
        --launcher ssh --hosts "127.0.0.1 ranks=1; 127.0.0.2 ranks=1" --ssh "ssh -F $dir/ssh_config"
        --set remote_worker="$worker" --set rendezvous_timeout_s=60)
q() { sqlite3 "$session" "$1"; }
steps_of() { q "select count(*) from steps where trial_id=$1"; }
workers_of() {  # pids of this test's workers (and node scripts) still running for trial id $1: other
  # checkouts run other worker binaries, and other tests of this build run this one with the same
  # trial ids (ctest -j), but locally, with their events on a socket in the trial's folder; an ssh
  # rank's events go to the forwarded /tmp/tunebench-NONCE-NODE.sock
  pgrep -f -- "$worker .*unix:/tmp/tunebench-[0-9a-f]+-[0-9]+\.sock.*--trial '?trial-$1'?( |\$)" || true
}

# ---- 1. a full 2-node run ------------------------------------------------------------------
out="$("$cli" run "$session" "${common[@]}" --set steps=3 --name "ssh ddp" --json 2>"$dir/run1.err")" ||
  fail "run exited $?: $out $(cat "$dir/run1.err")"
grep -q '"status": "done"' <<<"$out" || fail "run 1: $out"
[ "$(q "select status from trials where id=1")" = done ] || fail "trial 1 not done"
[ "$(q "select count(distinct rank) from steps where trial_id=1")" = 2 ] || fail "trial 1 lacks a rank's steps"
[ "$(steps_of 1)" = 6 ] || fail "trial 1 has $(steps_of 1) steps, expected 3 per rank"
launcher="$(q "select json_extract(config, '\$.launcher') from trials where id=1")"
[ "$launcher" = ssh ] || fail "the stored config's launcher is '$launcher'"
grep -q "step 3 of 3" "$dir/run1.err" || fail "no progress lines: $(cat "$dir/run1.err")"
echo "ok ($SECONDS s): 2-node DDP over ssh, both ranks recorded"

# ---- 2. Stop ends every remote rank -----------------------------------------------------------
"$cli" run "$session" "${common[@]}" --set steps=500 --name "ssh stop" 2>"$dir/run2.err" &
pid=$!
for _ in $(seq 600); do [ "$(steps_of 2 2>/dev/null || echo 0)" -ge 4 ] && break; sleep 0.2; done
[ "$(steps_of 2)" -ge 4 ] || { kill -INT $pid; fail "trial 2 recorded no steps: $(cat "$dir/run2.err")"; }
[ -n "$(workers_of 2)" ] || fail "no worker of trial 2 is running"
echo "  ($SECONDS s) trial 2 has $(steps_of 2) steps: stopping"
kill -INT $pid
rc=0; wait $pid || rc=$?
echo "  ($SECONDS s) the CLI exited"
[ $rc = 130 ] || fail "a stopped run exits 130, got $rc: $(cat "$dir/run2.err")"
[ "$(q "select status from trials where id=2")" = stopped ] || fail "trial 2 is $(q "select status from trials where id=2")"
[ "$(steps_of 2)" -ge 4 ] || fail "trial 2 lost its steps"
for _ in $(seq 50); do [ -z "$(workers_of 2)" ] && break; sleep 0.2; done
[ -z "$(workers_of 2)" ] || fail "workers of trial 2 still run after Stop: $(workers_of 2)"
ls /tmp/tunebench-*-?.sock 2>/dev/null | grep -q . && echo "note: leftover forwarded sockets: $(ls /tmp/tunebench-*-?.sock)"
echo "ok ($SECONDS s): Stop ended every remote rank, steps kept"

# ---- 3. a killed remote rank --------------------------------------------------------------
"$cli" run "$session" "${common[@]}" --set steps=500 --name "ssh kill" 2>"$dir/run3.err" &
pid=$!
for _ in $(seq 600); do [ "$(steps_of 3 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.2; done
victim=""
for p in $(workers_of 3); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'RANK=1' && victim=$p
done
[ -n "$victim" ] || { kill -INT $pid; fail "rank 1 of trial 3 not found"; }
kill -KILL "$victim"
rc=0; wait $pid || rc=$?
[ $rc != 0 ] || fail "a run whose rank was killed exits 0"
[ "$(q "select status from trials where id=3")" = failed ] || fail "trial 3 is $(q "select status from trials where id=3")"
reason="$(q "select exit_reason from trials where id=3")"
grep -q "rank 1 failed: signal 9" <<<"$reason" || fail "trial 3's reason: $reason"
for _ in $(seq 50); do [ -z "$(workers_of 3)" ] && break; sleep 0.2; done
[ -z "$(workers_of 3)" ] || fail "rank 0 of trial 3 still runs after rank 1 died"
echo "ok ($SECONDS s): a killed remote rank fails the trial ($reason)"
