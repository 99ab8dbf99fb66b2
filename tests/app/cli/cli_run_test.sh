#!/usr/bin/env bash
# `tunebench-cli run` and `sweep` on the local launcher with the real worker (tiny model, CPU):
# the trial lands in the session as the GUI writes it (status, source, tags, steps of every rank),
# the exit status is the trial's, Ctrl-C stops every rank and keeps the finished steps, --timeout
# fails the trial, a bad config starts nothing, and a sweep runs its grid under one tag.
# Usage: $0 CLI WORKER
set -euo pipefail
cli="$1"
worker="$2"
dir="$(mktemp -d /tmp/tunebench-run-test.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
session="$dir/s.tbsession"
q() { sqlite3 "$session" "$1"; }
steps_of() { q "select count(*) from steps where trial_id=$1"; }
# This test's workers only: the trial folders (and so the workers' --config) are under this test's
# own TMPDIR. Other tests of this build run the same worker with the same trial ids at the same time
# (ctest -j), so the worker's path and the trial id alone matched theirs too (a failure under load).
export TMPDIR="$dir/tmp"
mkdir -p "$TMPDIR"
workers_of() { pgrep -f -- "$worker .*--config $TMPDIR/.*--trial trial-$1( |\$)" || true; }
tiny=(--preset cpu-tiny --worker "$worker" --set warmup=1)

# ---- a 2-rank DDP run, --json ----------------------------------------------------------------
out="$("$cli" run "$session" "${tiny[@]}" --set steps=3 --set world_size=2 --set strategy=ddp --name "ddp 2" \
       --tag mine --json 2>"$dir/err1")" || fail "run exited $?: $out $(cat "$dir/err1")"
python3 - "$out" <<'PY' || fail "json summary: $out"
import json, sys
j = json.loads(sys.argv[1])
figures = {k: j.pop(k) for k in ("step_ms", "tokens_per_s", "samples_per_s", "finding")}
assert j == {"trial_id": 1, "name": "ddp 2", "status": "done", "exit_code": 0, "message": ""}, j
assert figures["step_ms"] > 0 and figures["tokens_per_s"] > 0, figures  # the figures the run was for
assert figures["samples_per_s"] is None, figures  # the benchmark counts tokens
assert isinstance(figures["finding"], str), figures
PY
[ "$(q "select status || '|' || source || '|' || name from trials where id=1")" = "done|cli run|ddp 2" ] ||
  fail "trial 1: $(q "select * from trials where id=1")"
[ "$(q "select group_concat(tag) from trial_tags where trial_id=1")" = mine ] || fail "trial 1's tags"
[ "$(q "select count(distinct rank) from steps where trial_id=1")" = 2 ] || fail "trial 1 lacks a rank"
[ "$(steps_of 1)" = 6 ] || fail "trial 1 has $(steps_of 1) steps"
grep -q "ddp 2: step 3 of 3" "$dir/err1" || fail "no plain progress lines: $(cat "$dir/err1")"
echo "ok ($SECONDS s): run --json"

# ---- a bad config starts nothing: exit 2 -----------------------------------------------------
rc=0; out="$("$cli" run "$session" "${tiny[@]}" --set world_size=3 --json 2>/dev/null)" || rc=$?
[ $rc = 2 ] || fail "an invalid config exits 2, got $rc"
grep -q '"trial_id": -1' <<<"$out" && grep -q "world_size" <<<"$out" || fail "invalid config: $out"
[ "$(q "select count(*) from trials")" = 1 ] || fail "an invalid config added a trial"
echo "ok ($SECONDS s): invalid config"

# ---- a worker that fails: the trial fails with its exit code ----------------------------------
printf '#!/bin/sh\necho "no GPU here" >&2\nexit 5\n' > "$dir/bad-worker"
chmod +x "$dir/bad-worker"
rc=0; "$cli" run "$session" --preset cpu-tiny --worker "$dir/bad-worker" 2>"$dir/err2" || rc=$?
[ $rc = 5 ] || fail "a failing worker's exit code 5 is the run's, got $rc"
reason="$(q "select exit_reason from trials where id=2")"
grep -q "rank 0 failed: exit code 5" <<<"$reason" || fail "trial 2's reason: $reason"
grep -q "no GPU here" "$dir/err2" || fail "the rank's stderr is not shown: $(cat "$dir/err2")"
echo "ok ($SECONDS s): failing worker"

# ---- Ctrl-C stops every rank and keeps the steps ---------------------------------------------
"$cli" run "$session" "${tiny[@]}" --set steps=500 --set world_size=2 --set strategy=ddp 2>"$dir/err3" &
pid=$!
for _ in $(seq 600); do [ "$(steps_of 3 2>/dev/null || echo 0)" -ge 4 ] && break; sleep 0.2; done
[ "$(steps_of 3)" -ge 4 ] || { kill -INT $pid; fail "trial 3 recorded no steps"; }
[ -n "$(workers_of 3)" ] || { kill -INT $pid; fail "no worker of trial 3 is running"; }
kill -INT $pid
rc=0; wait $pid || rc=$?
[ $rc = 130 ] || fail "Ctrl-C exits 130, got $rc"
[ "$(q "select status || '|' || exit_reason from trials where id=3")" = "stopped|stopped by the user" ] ||
  fail "trial 3: $(q "select status, exit_reason from trials where id=3")"
[ "$(steps_of 3)" -ge 4 ] || fail "trial 3 lost its steps"
[ -z "$(workers_of 3)" ] || fail "workers of trial 3 outlived Ctrl-C"
echo "ok ($SECONDS s): Ctrl-C"

# ---- --timeout ------------------------------------------------------------------------------
rc=0; "$cli" run "$session" "${tiny[@]}" --set steps=500 --timeout 4 2>/dev/null || rc=$?
[ $rc = 124 ] || fail "--timeout exits 124, got $rc"
[ "$(q "select status from trials where id=4")" = failed ] || fail "a timed-out trial is not failed"
q "select exit_reason from trials where id=4" | grep -q "timed out after 4 s" || fail "timeout reason"
echo "ok ($SECONDS s): --timeout"

# ---- sweep ----------------------------------------------------------------------------------
out="$("$cli" sweep "$session" "${tiny[@]}" --set steps=2 --grid micro_batch=2,4 --grid seq_len=32,0 --json \
       2>"$dir/err4")" || fail "sweep exited $?: $(cat "$dir/err4")"
grep -q "skipping invalid point micro_batch=2, seq_len=0" "$dir/err4" || fail "invalid points not reported"
python3 - "$out" <<'PY' || fail "sweep json: $out"
import json, sys
j = json.loads(sys.argv[1])
assert j["failed"] == 0 and not j["interrupted"], j
assert [t["status"] for t in j["trials"]] == ["done", "done"], j
assert j["tag"].startswith("sweep "), j
PY
tag="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["tag"])' "$out")"
[ "$(q "select count(*) from trial_tags where tag='$tag'")" = 2 ] || fail "the sweep's trials do not share a tag"
[ "$(q "select json_extract(config, '\$.micro_batch') from trials where id=6")" = 4 ] || fail "grid value not applied"
echo "ok ($SECONDS s): sweep"
