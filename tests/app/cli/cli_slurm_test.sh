#!/usr/bin/env bash
# The slurm launcher end to end against a real single-node cluster started here from Debian's
# packages (munged, slurmctld, slurmd; generated slurm.conf, own ports, own state folders): a 2-rank
# DDP trial through `tunebench-cli run --launcher slurm` in srun mode and in sbatch mode, events
# back over TCP with the trial's token, and Stop (SIGINT) of an sbatch trial, which scancels the job.
# Skips (exit 77, with the reason) without the packages, without root, or when the daemons do not
# come up within a minute. Usage: $0 CLI WORKER
set -euo pipefail
cli="$1"
worker="$2"
skip() { echo "SKIP: $*"; exit 77; }
for p in munged slurmctld slurmd; do command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || skip "$p is not installed (apt-get install slurmctld slurmd slurm-client munge)"; done
for p in srun sbatch scancel squeue scontrol; do command -v "$p" >/dev/null || skip "$p is not installed (slurm-client)"; done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root"
[ -r /etc/munge/munge.key ] || skip "no /etc/munge/munge.key (the munge package makes it)"
PATH="$PATH:/usr/sbin"

dir="$(mktemp -d /tmp/tunebench-slurm-test.XXXXXX)"
cleanup() {
  for d in slurmd slurmctld munged; do [ -f "$dir/$d.pid" ] && kill "$(cat "$dir/$d.pid")" 2>/dev/null || true; done
  sleep 0.5
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in slurmctld.log slurmd.log; do echo "--- $f" >&2; tail -n 15 "$dir/$f" >&2 || true; done
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host="$(hostname)"
mkdir -p "$dir/state" "$dir/spool" "$dir/shared"
cat > "$dir/slurm.conf" <<CONF
ClusterName=tunebench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$dir/slurm.conf"
munged --force --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge.seed" || skip "munged does not start: $(tail -n 2 "$dir/munged.log" 2>/dev/null)"
slurmctld -i || skip "slurmctld does not start"
slurmd || skip "slurmd does not start"
up=0
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)' && { up=1; break; }
  sleep 1
done
[ $up = 1 ] || skip "the one-node cluster did not come up within a minute: $(sinfo -h 2>&1 | head -n 1); $(tail -n 3 "$dir/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "cluster up after $SECONDS s"

session="$dir/s.tbsession"
q() { sqlite3 "$session" "$1"; }
common=(--preset cpu-tiny --set world_size=2 --set strategy=ddp --set warmup=1 --launcher slurm
        --set event_host=127.0.0.1 --set slurm_dir="$dir/shared" --set remote_worker="$worker"
        --set rendezvous_timeout_s=60)

out="$("$cli" run "$session" "${common[@]}" --set steps=3 --name srun --json 2>"$dir/err1")" ||
  fail "srun trial exited $?: $out $(cat "$dir/err1")"
[ "$(q "select status || '|' || (select count(distinct rank) from steps where trial_id=1) from trials where id=1")" = "done|2" ] ||
  fail "srun trial: $(q 'select status, exit_reason from trials where id=1')"
echo "ok ($SECONDS s): srun, both ranks' events over TCP with the token"

out="$("$cli" run "$session" "${common[@]}" --sbatch --set steps=3 --name sbatch --json 2>"$dir/err2")" ||
  fail "sbatch trial exited $?: $out $(cat "$dir/err2")"
[ "$(q "select status || '|' || (select count(*) from steps where trial_id=2) from trials where id=2")" = "done|6" ] ||
  fail "sbatch trial: $(q 'select status, exit_reason from trials where id=2')"
grep -q '^#SBATCH --ntasks-per-node=2$' "$dir"/shared/tunebench-trial-2-*.sbatch || fail "no generated batch script"
grep -q "TUNEBENCH-TOKEN\|TUNEBENCH_EVENT_TOKEN=" "$dir"/shared/* && fail "the token was written to the shared folder"
echo "ok ($SECONDS s): sbatch"

"$cli" run "$session" "${common[@]}" --sbatch --set steps=500 --name "sbatch stop" 2>"$dir/err3" &
pid=$!
for _ in $(seq 300); do [ "$(q "select count(*) from steps where trial_id=3" 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.2; done
[ -n "$(squeue -h -o %i)" ] || { kill -INT $pid; fail "no job in the queue: $(cat "$dir/err3")"; }
kill -INT $pid
rc=0; wait $pid || rc=$?
[ $rc = 130 ] || fail "a stopped sbatch run exits 130, got $rc: $(cat "$dir/err3")"
[ "$(q "select status from trials where id=3")" = stopped ] || fail "trial 3 is $(q 'select status from trials where id=3')"
for _ in $(seq 50); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.2; done
[ -z "$(squeue -h -o %i)" ] || fail "the job is still queued or running after Stop: $(squeue -h)"
echo "ok ($SECONDS s): Stop scancels the job"

# Your own script through srun: each task is a rank of the script's own init_process_group (env://),
# from the torchrun variables the task sets from SLURM's. The probe comes from the source tree here
# (remote_env), from PREFIX/share/tunebench/python beside an installed remote worker otherwise.
scripts="$(cd "$(dirname "$0")/../probe/scripts" && pwd)"
probe="$(cd "$(dirname "$0")/../../../app/probe" && pwd)"
out="$("$cli" run "$session" --launcher slurm --set event_host=127.0.0.1 --set slurm_dir="$dir/shared" \
       --set remote_worker="$worker" --set rendezvous_timeout_s=60 --set remote_env="PYTHONPATH=$probe" \
       --script "$scripts/train_ddp.py" --python /usr/bin/python3 --nproc 2 --set steps=3 --set warmup=1 \
       --name "srun script" --json 2>"$dir/err4")" || fail "srun script trial exited $?: $out $(cat "$dir/err4")"
id="$(q "select max(id) from trials")"
[ "$(q "select status || '|' || (select count(distinct rank) from steps where trial_id=$id) || '|' || (select count(*) from steps where trial_id=$id) from trials where id=$id")" = "done|2|6" ] ||
  fail "srun script trial: $(q "select status, exit_reason from trials where id=$id") $(cat "$dir/err4")"
[ "$(q "select count(*) from rank_env where trial_id=$id and json_extract(config, '\$.strategy') = 'ddp'")" = 2 ] ||
  fail "the script's ranks did not each join one DDP group: $(q "select rank, config from rank_env where trial_id=$id")"
echo "ok ($SECONDS s): a script's two ranks through srun"
