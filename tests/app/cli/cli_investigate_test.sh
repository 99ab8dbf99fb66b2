#!/usr/bin/env bash
# tunebench-cli tune and investigate with the real CPU worker (tiny custom model, a planted
# per-sample CPU cost with no loader threads): the search stores its trials in the session and
# writes a best config the worker accepts (a point of the space); an investigation of the first trial stops at its budget,
# and running it again resumes the same plan without running a stored trial twice.
# Usage: $0 CLI WORKER
set -euo pipefail
cli="$1"; worker="$2"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
session="$dir/s.tbsession"
TINY=(--set device=cpu --set model=custom --set dim=64 --set layers=2 --set heads=2 --set ffn=128 --set vocab=512
      --set seq_len=32 --set micro_batch=4 --set sample_cpu_us=10000)

# A 2 x 2 space; short trials of 5 steps, finalists of 8.
out="$("$cli" tune "$session" --preset cpu-tiny "${TINY[@]}" --axis num_workers=0,2 --axis micro_batch=2,4 \
        --short-steps 5 --long-steps 8 --warmup 2 --finalists 2 --worker "$worker" --out "$dir/best.json" 2>"$dir/tune.err")" \
  || { cat "$dir/tune.err" >&2; fail "tune exited non-zero"; }
grep -q "^best: " <<<"$out" || fail "tune printed no best: $out"
grep -q "^run it: tunebench-worker " <<<"$out" || fail "no command line: $out"
grep -q "^limited by: " <<<"$out" || fail "no limiter: $out"
grep -q "tune plan 1: 2 axes, grid of 4 points" "$dir/tune.err" || fail "progress: $(cat "$dir/tune.err")"
# The best config is one of the space's points (which one is a timing on a shared machine: the real
# worker's investigate test asserts the planted cause where the noise allows).
python3 -c "import json,sys; c=json.load(open('$dir/best.json')); assert c['num_workers'] in (0,2) and c['micro_batch'] in (2,4), c" \
  || fail "best.json is not a point of the space: $(cat "$dir/best.json")"
"$worker" --config "$dir/best.json" --steps 3 --warmup 1 --events "file:$dir/best.jsonl" 2>/dev/null \
  || fail "the worker refused the best config"
# The trials say what --set changed in the preset, not only the preset's own name.
"$cli" list "$session" | grep -q "+ device=cpu model=custom dim=64" || fail "trial names hide the --set changes: $("$cli" list "$session")"
trials_after_tune="$("$cli" list "$session" | grep -c ' done ' || true)"
[ "$trials_after_tune" -ge 4 ] || fail "tune stored $trials_after_tune trials"

# The same command again: the search is resumed and runs nothing new.
"$cli" tune "$session" --preset cpu-tiny "${TINY[@]}" --axis num_workers=0,2 --axis micro_batch=2,4 \
  --short-steps 5 --long-steps 8 --warmup 2 --finalists 2 --worker "$worker" >/dev/null 2>&1 || fail "tune resume"
[ "$("$cli" list "$session" | grep -c ' done ')" = "$trials_after_tune" ] || fail "a resumed tune ran trials again"

# Investigate trial 1 (num_workers 0: data-bound) with a budget of 3 trials, then resume. One run of
# each variant (--max-repeats 1): repeats of a variant within the noise depend on the machine's load,
# and the count of trials checked here must not (a loaded full suite once needed one fewer). The
# plan is then the baseline twice and its 2 variants: the budget of 3 leaves the last variant.
"$cli" investigate "$session" 1 --budget 3 --steps 8 --warmup 2 --max-repeats 1 --worker "$worker" --json >"$dir/inv1.json" 2>"$dir/inv1.err" \
  || { cat "$dir/inv1.err" >&2; fail "investigate exited non-zero"; }
grep -q "^plan 2 for trial 1" "$dir/inv1.err" || fail "plan line: $(cat "$dir/inv1.err")"
grep -q "skipped  communication settings: not relevant: a single rank has no communication" "$dir/inv1.err" \
  || fail "no skipped list: $(cat "$dir/inv1.err")"
[ "$(grep -c '^\[' "$dir/inv1.err")" = 3 ] || fail "budget 3 ran $(grep -c '^\[' "$dir/inv1.err") trials"
python3 -c "import json; j=json.load(open('$dir/inv1.json')); assert j['plan']==2 and j['not_run'], j" || fail "partial json"
"$cli" investigate "$session" 1 --budget 5 --steps 8 --warmup 2 --max-repeats 1 --worker "$worker" >"$dir/inv2.txt" 2>"$dir/inv2.err" \
  || { cat "$dir/inv2.err" >&2; fail "resume exited non-zero"; }
[ "$(grep -c '^\[' "$dir/inv2.err")" = 1 ] || fail "resume ran $(grep -c '^\[' "$dir/inv2.err") trials, not the 1 missing"
missing="$(python3 -c "import json; print(json.load(open('$dir/inv1.json'))['not_run'][0])")"
grep -q "^\[4/4\] v2 $missing\$" "$dir/inv2.err" || fail "resume did not run the missing '$missing': $(cat "$dir/inv2.err")"
grep -q "^plan 2 for trial 1" "$dir/inv2.err" || fail "resume planned anew"
grep -q "Baseline: " "$dir/inv2.txt" || fail "no verdict: $(cat "$dir/inv2.txt")"
grep -q "rank  factor" "$dir/inv2.txt" || fail "no table"
echo "cli investigate/tune: ok"
