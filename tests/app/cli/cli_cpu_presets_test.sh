#!/usr/bin/env bash
# The CPU presets show the finding they advertise (README, "CPU presets"): `cpu-data-bound`, run
# briefly with the real worker, is diagnosed data-bound, by `run`'s top finding and by `report`,
# with the loader-thread suggestion, and the data wait is the preset's own CPU cost per step.
# Usage: $0 CLI WORKER
set -euo pipefail
cli="$1"
worker="$2"
dir="$(mktemp -d /tmp/tunebench-presets-test.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export TMPDIR="$dir/tmp"
mkdir -p "$TMPDIR"
session="$dir/s.tbsession"

# 3 steps, 1 of them warm-up: 2 measured steps of about 1 s of data each (a few seconds in all).
out="$("$cli" run "$session" --preset cpu-data-bound --worker "$worker" --set steps=3 --set warmup=1 --json \
       2>"$dir/err")" || fail "run exited $?: $out $(cat "$dir/err")"
python3 - "$out" <<'PY' || fail "run's top finding is not data-bound: $out"
import json, sys
j = json.loads(sys.argv[1])
assert j["status"] == "done", j
assert j["finding"].startswith("data-bound:"), j["finding"]
PY
report="$("$cli" report "$session" --wide)" || fail "report exited $?"
grep -q "data-bound: data wait" <<<"$report" || fail "report does not say data-bound: $report"
grep -q "num_workers" <<<"$report" || fail "report suggests no loader threads: $report"
# In the report's JSON: data-bound is the top finding, and its data wait is at least the preset's
# CPU cost per step (micro_batch x sample_cpu_us, from the preset's own config).
"$cli" report "$session" --json >"$dir/r.json" || fail "report --json exited $?"
python3 - "$dir/r.json" <<'PY' || fail "data-bound finding: $(head -c 2000 "$dir/r.json")"
import json, sys
r = json.load(open(sys.argv[1]))
top = r["diagnoses"][0]["findings"][0]
assert top["kind"] == "data-bound", top
t = r["trials"][0]
cfg = t["config"]
assert cfg["num_workers"] == 0 and cfg["sample_cpu_us"] > 0, cfg
cost_ms = cfg["micro_batch"] * cfg["grad_accum"] * cfg["sample_cpu_us"] / 1000.0
assert t["data_wait_ms"]["median"] >= 0.9 * cost_ms, (t["data_wait_ms"], cost_ms)
PY
echo "cpu-data-bound: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["finding"])' "$out")"
