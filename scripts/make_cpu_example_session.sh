#!/usr/bin/env bash
# Builds sessions/cpu-tiny.tbsession from REAL worker runs on the CPU: the tiny model, single
# process and 2-rank DDP over Gloo, each written headless to a .jsonl event log and imported with
# tunebench-cli. Nothing here is synthetic; the steps are few so the file stays small.
#
#   scripts/make_cpu_example_session.sh WORKER CLI OUT.tbsession [STEPS]
set -euo pipefail
worker=${1:?worker program}; cli=${2:?tunebench-cli}; out=${3:?output session}; steps=${4:-12}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rm -f "$out" "$out-wal" "$out-shm"

run_ranks() {  # NAME PRESET WORLD
  local name=$1 preset=$2 world=$3 port=$((29500 + RANDOM % 2000)) pids=()
  for ((r = 0; r < world; r++)); do
    RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r LOCAL_WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$worker" --preset "$preset" --name "$name" --steps "$steps" --warmup 2 --gpu-sample-hz 1 --trial "$name" \
      --events "file:$tmp/$name.rank$r.jsonl" >"$tmp/$name.rank$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  cat "$tmp/$name".rank*.jsonl >"$tmp/$name.jsonl"   # the importer takes ranks interleaved or not
  "$cli" import "$out" "$tmp/$name.jsonl" --name "$name"
}

run_ranks cpu-tiny-single cpu-tiny 1
run_ranks cpu-tiny-ddp2 cpu-tiny-ddp 2
# The start page shows the session's name and notes.
sqlite3 "$out" "UPDATE session SET name = 'CPU tiny: single vs 2-rank DDP (Gloo)', notes = 'The tiny LLaMA preset on the CPU, $steps steps each: one process, then two ranks with DDP over Gloo. Real tunebench-worker runs, recorded $(date -u +%Y-%m-%d) on $(nproc) cores of $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs).'; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;" >/dev/null
ls -la "$out"
