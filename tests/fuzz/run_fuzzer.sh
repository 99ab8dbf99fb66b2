#!/usr/bin/env bash
# Runs one libFuzzer target for a set time on a scratch corpus seeded from the tree, so nothing in
# the checkout is written. Usage: run_fuzzer.sh FUZZER SECONDS WORKDIR MAX_LEN SEED_DIR...
# Exit status: libFuzzer's (non-zero when it found a crash, a leak, a timeout or a broken oracle;
# the input is then under WORKDIR/artifacts/). The last lines of its output give the executions.
set -euo pipefail
fuzzer="$1" seconds="$2" work="$3" max_len="$4"
shift 4
seeds=()
for s in "$@"; do [ -e "$s" ] && seeds+=("$s"); done
mkdir -p "$work/corpus" "$work/artifacts"
status=0
"$fuzzer" "$work/corpus" "${seeds[@]}" -max_total_time="$seconds" -max_len="$max_len" -timeout=60 \
  -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$work/artifacts/" >"$work/log.txt" 2>&1 || status=$?
grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added)|^(==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" \
  "$work/log.txt" || true
if [ "$status" -ne 0 ]; then
  echo "fuzzer $(basename "$fuzzer") failed (status $status); last lines of $work/log.txt:" >&2
  tail -n 40 "$work/log.txt" >&2
fi
exit "$status"
