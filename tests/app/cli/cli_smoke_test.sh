#!/usr/bin/env bash
# tunebench-cli end to end: import a small event log (with one bad line), list, export in every
# format (several trials in one Chrome trace), the preset listing, and the errors a user meets (not
# a session, two trials for one trace). Usage: $0 CLI
set -euo pipefail
cli="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

log="$dir/run.jsonl"
for r in 0 1; do
  echo '{"v":1,"type":"hello","trial":"smoke","rank":'$r',"t_us":1764000000000000,"host":"h","world_size":2,"device":"cpu","config":{"strategy":"ddp"}}'
done > "$log"
for s in 0 1 2; do
  for r in 0 1; do
    t=$((1764000000001000 + s * 10000))
    # rank 1's steps end 500 us later: the trial's step time is the slowest rank's (9.5 ms)
    echo '{"v":1,"type":"step","trial":"smoke","rank":'$r',"t_us":'$t',"step":'$s',"start_us":'$t',"end_us":'$((t + 9000 + 500 * r))',"step_ms":9.0,"intervals":[{"lane":"compute","phase":"forward","start_us":'$t',"end_us":'$((t + 4000))'},{"lane":"comm","phase":"all_reduce","start_us":'$((t + 5000))',"end_us":'$((t + 8000))',"label":"bucket 0","bytes":1000,"busbw_gbps":1.5}]}'
  done
done >> "$log"
echo 'NCCL INFO not an event' >> "$log"
for r in 0 1; do
  echo '{"v":1,"type":"done","trial":"smoke","rank":'$r',"t_us":1764000000099000,"exit_code":0,"summary":{"measured_steps":3}}'
done >> "$log"

# presets: every model preset with its parameter count, every trial preset with its description
out="$("$cli" presets)"
grep -qE '^  7b +6738415616 parameters  dim=4096 ' <<<"$out" || fail "presets: $out"
grep -q '7b-ddp-no-p2p   DDP with NCCL_P2P_DISABLE=1' <<<"$out" || fail "presets: $out"
"$cli" presets --json > "$dir/presets.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["models"]["125m"]["params"] == 134105856, j["models"]["125m"]; assert any(t["name"] == "cpu-tiny" for t in j["trials"])' "$dir/presets.json" || fail "presets --json"

session="$dir/s.tbsession"
out="$("$cli" import "$session" "$log" --name "smoke run" 2>&1)"
grep -q "imported trial 1 'smoke run' (done)" <<<"$out" || fail "import: $out"
grep -q "10 records, 1 problems" <<<"$out" || fail "import count: $out"
out="$("$cli" list "$session")"
# steps per rank (the 2-rank log has 6 step records), as the report and the window count them
grep -Eq '^ +1 +done +3 +9\.5 +smoke run$' <<<"$out" || fail "list: $out"

"$cli" export "$session" --trial 1 --format csv -o "$dir/steps.csv"
[ "$(wc -l < "$dir/steps.csv")" -eq 7 ] || fail "steps.csv has $(wc -l < "$dir/steps.csv") lines"
"$cli" export "$session" --format csv --table summaries -o "$dir/sum.csv"
[ "$(wc -l < "$dir/sum.csv")" -eq 3 ] || fail "summaries.csv"
"$cli" export "$session" --format json -o "$dir/t.json"
grep -q '"format": "tunebench-trials"' "$dir/t.json" || fail "json export"
"$cli" export "$session" --trial 1 --format chrome-trace -o "$dir/trace.json"
[ "$(grep -o '"ph":"X"' "$dir/trace.json" | wc -l)" -eq 12 ] || fail "trace: expected 12 complete events"
grep -q '"name":"rank 1"' "$dir/trace.json" || fail "trace: no rank 1 process"

if out="$("$cli" list "$log" 2>&1)"; then fail "listed a .jsonl as a session"; fi
grep -q "not a Tunebench session" <<<"$out" || fail "list of a non-session: $out"
# Several trials in one Chrome trace: trials 1 and 3 (not 2), one process per trial and rank.
"$cli" import "$session" "$log" --name "second" > /dev/null 2>&1
"$cli" import "$session" "$log" --name "third" > /dev/null 2>&1
"$cli" export "$session" --trial 1 --trial 3 --format chrome-trace -o "$dir/two.json"
python3 - "$dir/two.json" <<'PY' || fail "trace of trials 1 and 3: $(head -c 400 "$dir/two.json")"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {0: "smoke run \u00b7 rank 0", 1: "smoke run \u00b7 rank 1",
                 1000: "third \u00b7 rank 0", 1001: "third \u00b7 rank 1"}, names
complete = [e for e in events if e["ph"] == "X"]
assert len(complete) == 24, len(complete)
assert {e["pid"] for e in complete} == {0, 1, 1000, 1001}
PY

# Issue 44: one wording and one exit status per mistake, whatever the subcommand. A file that is
# not there: "cannot open PATH: No such file or directory", status 1 (CLI11 said "File does not
# exist" with 105 in some subcommands, others "trial -1 failed").
missing="$dir/nowhere.tbsession"
for args in "list $missing" "report $missing" "settings $missing --trial 1" "investigate $missing 1" \
            "import $missing $dir/nowhere.jsonl" "export $missing --trial 1 --format json -o -" \
            "predict --config $dir/nowhere.json" "run $session --config $dir/nowhere.json"; do
  rc=0; out="$("$cli" $args 2>&1)" || rc=$?
  [ $rc = 1 ] || fail "'$args' exits $rc, not 1: $out"
  grep -q "^tunebench-cli: cannot open $dir/nowhere\.[a-z]*: No such file or directory$" <<<"$out" ||
    fail "'$args' says: $out"
done
# A trial that is not in the session is named, never dropped from the selection.
rc=0; out="$("$cli" report "$session" --trials 1,99 2>&1)" || rc=$?
[ $rc = 1 ] && grep -q "has no trial 99" <<<"$out" || fail "report --trials 1,99: $rc $out"
# predict refuses what run refuses, with its words and its status.
rc=0; out="$("$cli" predict --preset cpu-tiny --set micro_batch=0 2>&1)" || rc=$?
[ $rc = 2 ] && grep -q "invalid configuration: micro_batch" <<<"$out" || fail "predict of an invalid config: $rc $out"
rc=0; out="$("$cli" predict --preset cpu-tiny --gpus 0 2>&1)" || rc=$?
[ $rc != 0 ] || fail "predict --gpus 0 is not ignored: $out"
echo "cli smoke test passed"
