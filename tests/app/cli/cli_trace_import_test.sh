#!/usr/bin/env bash
# tunebench-cli with torch.profiler traces (tests/data/traces): import per-rank traces with --set,
# list, report (the num_workers-0 trace is data-bound), fill in settings later, export; and the
# bad inputs a user meets, each with its message and the session left as it was.
# Usage: $0 CLI TRACES_DIR
set -euo pipefail
cli="$1"
traces="$2"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

session="$dir/s.tbsession"
out="$("$cli" import "$session" "$traces"/ddp-nw4/*.pt.trace.json.gz --name "my ddp" --set micro_batch=8 --set seq_len=512 2>&1)"
grep -q "imported trial 1 'my ddp' (done) from torch.profiler traces: 2 of 2 ranks, 4 steps" <<<"$out" || fail "import ddp: $out"
grep -q "unknown settings" <<<"$out" || fail "import does not list the unknown settings: $out"
grep -q " grad_accum" <<<"$out" || fail "grad_accum should be unknown: $out"
out="$("$cli" import "$session" "$traces"/single-nw0/*.pt.trace.json.gz 2>&1)"
grep -q "imported trial 2 'rank0\.[0-9]* (imported trace, 1 rank)'" <<<"$out" || fail "import nw0: $out"
out="$("$cli" list "$session")"
grep -Eq '^ +1 +done +4 +[0-9]+\.[0-9] +my ddp$' <<<"$out" || fail "list: $out"
# A folder stands for the traces in it (a meta.json beside them is left out); a folder without one
# is refused, saying so.
folder="$dir/folder.tbsession"
out="$("$cli" import "$folder" "$traces"/ddp-nw4 2>&1)"
grep -q "imported trial 1 .*2 of 2 ranks, 4 steps" <<<"$out" || fail "import of a folder: $out"
mkdir "$dir/empty"
echo '{}' >"$dir/empty/meta.json"
if out="$("$cli" import "$folder" "$dir/empty" 2>&1)"; then fail "a folder without traces was imported: $out"; fi
grep -q "is a folder without torch.profiler traces" <<<"$out" || fail "folder without traces: $out"
# One rank of two: 4 steps in the import's line and in list, as the report counts them.
other="$dir/one-rank.tbsession"
out="$("$cli" import "$other" "$traces"/ddp-nw4/rank0.*.pt.trace.json.gz 2>&1)"
grep -q "1 of 2 ranks, 4 steps" <<<"$out" || fail "import of one rank: $out"
out="$("$cli" list "$other")"
grep -Eq '^ +1 +done +4 +[0-9]+\.[0-9] +rank0\.[0-9]+ \(imported trace, 1 rank\)$' <<<"$out" || fail "list of one rank: $out"
grep -q "4 measured steps" <<<"$("$cli" report "$other")" || fail "report of one rank counts other steps"

out="$("$cli" report "$session" --trials 2)"
grep -q "data-bound" <<<"$out" || fail "nw0 report is not data-bound: $out"
grep -q "num_workers 4" <<<"$out" || fail "nw0 report does not suggest num_workers 4: $out"
out="$("$cli" report "$session" --trials 1 --json)"
grep -q '"micro_batch": 8' <<<"$out" || fail "report json lacks the known micro_batch: $out"
if grep -q '"grad_accum"' <<<"$out"; then fail "report json shows an unknown knob"; fi

out="$("$cli" settings "$session" --trial 1 grad_accum=1)"
grep -q "grad_accum = 1" <<<"$out" || fail "settings: $out"
grep -q "bucket_mb = unknown" <<<"$out" || fail "settings: $out"
out="$("$cli" report "$session" --trials 1)"
grep -q "tokens/s" <<<"$out" || fail "throughput after the settings: $out"
# A model counted in samples (a CNN, issue 44): samples per step is a known setting of its own,
# and the report then has samples/s from the measured step time.
out="$("$cli" settings "$session" --trial 2)"
grep -q "samples_per_step = unknown" <<<"$out" || fail "samples_per_step is not an unknown setting: $out"
out="$("$cli" settings "$session" --trial 2 samples_per_step=32)"
grep -q "samples_per_step = 32" <<<"$out" || fail "settings samples_per_step: $out"
out="$("$cli" report "$session" --trials 2)"
grep -q "samples/s" <<<"$out" || fail "no samples/s after samples_per_step: $out"

"$cli" export "$session" --trial 1 --format chrome-trace -o "$dir/timeline.json"
grep -q '"name":"rank 1"' "$dir/timeline.json" || fail "chrome trace of the imported trial"
grep -q '"name":"all_reduce' "$dir/timeline.json" || fail "chrome trace has no all_reduce"

# ---- bad input: a message each, exit 1, nothing written ----
before="$("$cli" list "$session")"
expect_fail() {  # expect_fail PATTERN ARGS...
  local pattern="$1"
  shift
  local out
  if out="$("$cli" "$@" 2>&1)"; then fail "succeeded: $*"; fi
  grep -q -- "$pattern" <<<"$out" || fail "$* said: $out"
  [ "$("$cli" list "$session")" = "$before" ] || fail "$* changed the session"
}
echo '{"model": "7b"}' > "$dir/config.json"
expect_fail "is neither a Tunebench event log" import "$session" "$dir/config.json"
printf '{\n "model": "7b"\n}\n' > "$dir/pretty.json"
expect_fail 'is not a torch.profiler trace: it has no "traceEvents"' import "$session" "$dir/pretty.json"
head -c 200000 "$traces"/single-nw4/*.gz > "$dir/cut.pt.trace.json.gz"
expect_fail "cut.pt.trace.json.gz: the gzip stream ends before its end marker (the file is truncated)" \
  import "$session" "$dir/cut.pt.trace.json.gz"
expect_fail "do not overlap in time" import "$session" "$traces"/ddp-nw4/rank0*.gz "$traces"/fsdp2-nw4/rank1*.gz
expect_fail "are both rank 0: traces without distributedInfo" \
  import "$session" "$traces"/single-nw0/*.gz "$traces"/single-nw4/*.gz
expect_fail "micro_bach=8: unknown knob 'micro_bach'" import "$session" "$traces"/single-nw4/*.gz --set micro_bach=8
"$cli" import "$session" "$traces/../analysis/forum_single.jsonl" > /dev/null
before="$("$cli" list "$session")"
expect_fail "ran with a complete configuration" settings "$session" --trial 3 micro_batch=2
expect_fail "--set is for torch.profiler traces" import "$session" "$traces/../analysis/forum_single.jsonl" --set micro_batch=2
# A failed first import leaves no session file behind.
if "$cli" import "$dir/new.tbsession" "$dir/config.json" > /dev/null 2>&1; then fail "imported config.json"; fi
[ ! -e "$dir/new.tbsession" ] || fail "a failed first import left a session file"
echo "cli trace import test passed"
