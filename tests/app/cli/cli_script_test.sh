#!/usr/bin/env bash
# Your own PyTorch script as a trial (issue 39), through `tunebench-cli run --script` with real
# PyTorch (Debian's python3-torch, CPU, Gloo): knobs applied without changing the script, two
# ranks started by Tunebench's launcher with the rendezvous environment, the trials stored and
# compared (a loader-bound script and the same with loader processes), and each failure ending
# with its message: a script that raises, one that never steps, a wrong interpreter.
# Usage: $0 CLI   (skips, exit 77, when /usr/bin/python3 cannot import torch)
set -euo pipefail
cli="$1"
here="$(cd "$(dirname "$0")/../probe/scripts" && pwd)"
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || { echo "SKIP: $python cannot import torch (apt install python3-torch)"; exit 77; }
dir="$(mktemp -d /tmp/tunebench-script-test.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
export TMPDIR="$dir/tmp"
mkdir -p "$TMPDIR"
fail() { echo "FAIL: $*" >&2; exit 1; }
session="$dir/s.tbsession"
q() { sqlite3 "$session" "$1"; }
run() { "$cli" run "$session" --python "$python" "$@"; }

# ---- knobs reach the script's DataLoader; the trial is stored with what is known --------------
out="$(run --script "$here/train_mlp.py" --name applied --set steps=6 --set warmup=1 --set num_workers=2 \
       --set pin_memory=false --json -- --batch-size '{micro_batch}' 2>"$dir/err1")" || fail "run: $(cat "$dir/err1")"
grep -q '"status": "done"' <<<"$out" || fail "not done: $out"
# What the probe saw the script's DataLoader built with (its own hooks, after the knob was applied).
[ "$(q "select json_extract(config, '\$.num_workers') || ' ' || json_extract(config, '\$.pin_memory') from rank_env where trial_id=1")" = "2 0" ] ||
  fail "num_workers did not reach the DataLoader: $(q "select config from rank_env where trial_id=1")"
[ "$(q "select count(*) from steps where trial_id=1")" = 6 ] || fail "trial 1 has $(q "select count(*) from steps where trial_id=1") steps"
[ "$(q "select json_extract(config, '\$.script_knobs') from trials where id=1")" = '["num_workers","pin_memory"]' ] ||
  fail "applied knobs: $(q "select config from trials where id=1")"
[ "$(q "select json_type(config, '\$.model') from trials where id=1")" = "" ] || fail "a script's model must read unknown"
[ "$(q "select json_extract(config, '\$.micro_batch') from rank_env where trial_id=1")" = 4 ] ||
  fail "the batch seen: $(q "select config from rank_env where trial_id=1")"
echo "ok ($SECONDS s): knobs applied, trial stored"

# ---- two ranks over Gloo, started by the launcher; bucket_mb reaches DDP -----------------------
run --script "$here/train_ddp.py" --nproc 2 --name ddp --set steps=5 --set warmup=1 --set bucket_mb=0.25 \
    2>"$dir/err2" || fail "ddp run: $(cat "$dir/err2")"
[ "$(q "select json_extract(config, '\$.bucket_mb') || ' ' || json_extract(config, '\$.strategy') from rank_env where trial_id=2 and rank=1")" = "0.25 ddp" ] ||
  fail "bucket_mb did not reach DDP: $(q "select config from rank_env where trial_id=2")"
[ "$(q "select count(distinct rank) from steps where trial_id=2")" = 2 ] || fail "a rank is missing"
[ "$(q "select count(*) from steps where trial_id=2")" = 10 ] || fail "ddp steps: $(q "select count(*) from steps where trial_id=2")"
[ "$(q "select count(*) from intervals i join steps s on i.step_id = s.id where s.trial_id=2 and i.phase='all_reduce' and i.bytes > 0")" -ge 20 ] ||
  fail "no all-reduce buckets with bytes"
echo "ok ($SECONDS s): two ranks, DDP buckets"

# ---- A/B: a loader-bound script, then the same with loader processes -------------------------
for workers in 0 4; do
  run --script "$here/train_mlp.py" --name "loader nw$workers" --set steps=14 --set warmup=2 \
      --set num_workers=$workers -- --batch-sleep-ms 40 --sample-cpu-us 0 2>>"$dir/err3" ||
    fail "loader run: $(tail -5 "$dir/err3")"
done
"$cli" report "$session" --trials 3,4 --wide > "$dir/report.txt" || fail "report: $(cat "$dir/report.txt")"
grep -qi "data-bound" "$dir/report.txt" || fail "the loader-bound script is not called data-bound: $(cat "$dir/report.txt")"
grep -q "num_workers" "$dir/report.txt" || fail "the comparison does not name num_workers: $(cat "$dir/report.txt")"
echo "ok ($SECONDS s): A/B compared and diagnosed"

# ---- failures: each ends with its message, finished steps kept --------------------------------
rc=0; run --script "$here/fails_at_step.py" --name raises --set steps=8 --set warmup=1 2>"$dir/err4" || rc=$?
[ $rc = 1 ] || fail "a script that raises exits 1, got $rc"
grep -q "the script raised ValueError: the labels are out of range" <<<"$(q "select exit_reason from trials where id=5")" ||
  fail "reason: $(q "select exit_reason from trials where id=5")"
[ "$(q "select count(*) from steps where trial_id=5")" = 3 ] || fail "the finished steps of a failing script are kept"
rc=0; run --script "$here/manual_sgd.py" --name "no step" --set steps=8 --set warmup=1 --set step_timeout_s=3 2>"$dir/err5" || rc=$?
[ $rc = 4 ] || fail "a script that never steps exits 4, got $rc"
grep -q "no training step seen in 3 s" <<<"$(q "select exit_reason from trials where id=6")" ||
  fail "reason: $(q "select exit_reason from trials where id=6")"
rc=0; "$cli" run "$session" --script "$here/train_mlp.py" --python /nonexistent/python3 2>"$dir/err6" || rc=$?
[ $rc != 0 ] || fail "a missing interpreter must fail"
grep -q "/nonexistent/python3" "$dir/err6" || fail "the interpreter is not named: $(cat "$dir/err6")"
rc=0; "$cli" run "$session" --script "$here/train_mlp.py" --set checkpointing=true 2>"$dir/err7" || rc=$?
[ $rc = 2 ] || fail "a knob the script cannot take exits 2, got $rc"
grep -q "checkpointing" "$dir/err7" || fail "the refused knob is not named: $(cat "$dir/err7")"
echo "ok ($SECONDS s): failures"
