#!/usr/bin/env bash
# GPU checks of tunebench-worker, in one call on the GPU machine (see docs/BENCHMARKS.md).
#
#   Every mode below reproduces a figure of docs/BENCHMARKS.md (the section that shows it names the
#   mode) or re-records data the tests read. The modes of finished experiments were removed on
#   2026-12-07 (issue 42): docs/history/ records their results and commands, and
#   `git show cb7dc16:scripts/gpu-bench.sh` is the script they ran with.
#
#   One GPU (nvidia-h200):
#   scripts/gpu-bench.sh smoke    # build, one tiny step, and the kernel sampler's clock check
#   scripts/gpu-bench.sh single   # 7B single vs PyTorch, timed vs untimed, CUDA graph, checkpointing
#   scripts/gpu-bench.sh kernels  # the fused-kernel check (tunebench-kernel-check), 125m eager/fused/
#                                 # graph/fp8 vs PyTorch eager and torch.compile, 500-step loss curves
#   scripts/gpu-bench.sh kernels7b  # 7B eager/fused/fused+graph/fp8 vs PyTorch eager and torch.compile
#   scripts/gpu-bench.sh models-final  # 1 GPU, about 8 min with the build: every preset (7b, llama3.1-8b,
#                                 # mistral-7b, qwen2.5-7b, phi3-mini, llama3.2-1b) and head sizes 80, 112
#                                 # and 100 (dim 3200), each at LAYERS (default 4) layers of its own
#                                 # per-layer shape: worker `compile fused` against torch.compile of
#                                 # scripts/pytorch_reference.py at the same shape in this call (fewer
#                                 # layers and steps keep torch.compile's compile time small; its
#                                 # compiles are pre-warmed three at a time while the worker builds),
#                                 # the attention kernel each ran, and (with .gpu/cli.tar.xz) the step
#                                 # prediction calibrated on sessions/h200-7b.tbsession. Kernel sampling
#                                 # is off (sampled steps carry profiler cost). Table printed last.
#   scripts/gpu-bench.sh models-eager  # about 4 min with the build: models-final's rows at LAYERS
#                                 # layers, worker eager vs PyTorch eager and fp8 + fused vs bf16 fused
#                                 # in this call. Table printed last.
#   scripts/gpu-bench.sh models-fp8  # about 8 min with the build: every preset and the head-size
#                                 # customs (hd80, hd112 at 24 layers, hd100 at 26) at full depth, `amp
#                                 # fp8` + `compile fused` against bf16 `compile fused`, ROUNDS (default 2)
#                                 # interleaved rounds (the second in the other order), phases and peaks.
#                                 # Table (lab/models_fp8_table.py) printed last. FP8_ONLY="ROW ..."
#                                 # runs those rows only, FP8_MB=N at micro-batch N (default 1),
#                                 # FP8_STEPS=N steps (default 8).
#   scripts/gpu-bench.sh models-check  # about 9 min with the build: the GEMM probe (10 calls per
#                                 # pair of events) for the catalogue's shape fit, every models-final row
#                                 # at LAYERS layers in `compile fused` with the allocator's peak per
#                                 # phase (TUNEBENCH_MEMORY_PHASES=1), and the full-depth presets'
#                                 # peaks; configs in $OUT/configs for `predict` on a developer machine.
#                                 # Table (lab/models_check_table.py) printed last.
#   scripts/gpu-bench.sh models-probe  # no build, about 2 min: SDPA kernels by head size and grouping and
#                                 # GEMM TFLOP/s by shape (lab/models_probe.py), the input of
#                                 # lab/fit_models_probe.py (the catalogue's attention and GEMM constants)
#   scripts/gpu-bench.sh mfu7b    # about 3 min with the build: 7B `compile fused` at micro-batch
#                                 # 1, 2 and 3, ROUNDS (default 2) interleaved rounds, phases and peaks
#   scripts/gpu-bench.sh grads    # about 7 min with the build: `grad_dtype` bf16 against fp32:
#                                 # the kernel check (its AdamW rows, bf16 gradients among them); the
#                                 # tiny model's losses both ways (also with checkpointing, and with
#                                 # clipping) and eager; then GR_ROWS (default 7b
#                                 # llama3.2-1b) bf16 `compile fused` at micro-batch 1 both ways, ROUNDS
#                                 # (default 2) interleaved, the second in the other order, with the
#                                 # allocator's peak per phase. Table (lab/models_check_table.py) last.
#   scripts/gpu-bench.sh gemm-search  # about 5 min with the build: the GEMM algorithm search against
#                                 # cuBLAS's pick (TUNEBENCH_GEMM=cublas): kernel check, tiny losses both
#                                 # ways, GS_ROWS (default 7B bf16, Llama-3.2-1B bf16 and fp8) at
#                                 # micro-batch 1, ROUNDS (default 2) interleaved. Table last.
#   scripts/gpu-bench.sh overlap  # about 4 min with the build: 7B `compile fused` with
#                                 # optimizer_overlap against the serial update, interleaved ROUNDS
#                                 # (default 2), phases and the allocator's peak per phase; the tiny
#                                 # model both ways (losses). Table printed last.
#   scripts/gpu-bench.sh idle     # about 6 min with the build: GPU busy and GPU idle. torch.profiler
#                                 # traces of our own small jobs (launch-bound CNN at batch 8, a loop
#                                 # calling loss.item() every step, a GPU-bound control; the DDP CNN only
#                                 # with 2 GPUs) into idle-traces.tar.gz, then kernel-sampled worker runs:
#                                 # tiny at seq 256 micro-batch 4 eager vs compile fused+graph, 7B single,
#                                 # 7B eager and fused, untimed / timed (tiny: interleaved 3x) / sampled
#                                 # at tiny and 7B (the costs of timing and sampling). IDLE_SKIP_TRACES=1:
#                                 # worker runs only. The table (lab/idle_table.py) is printed last.
#   scripts/gpu-bench.sh sampling # about 6 min with the build: the cost of kernel sampling on a
#                                 # launch-bound run (tiny eager untimed vs sampled, PAIRS=6 interleaved
#                                 # pairs; CUPTI detached after host-bound samples), tiny fused+graph
#                                 # sampled, 7B `compile fused` unsampled / sampled and `fused+graph`.
#   scripts/gpu-bench.sh script   # no build, about 6 min: your own script under tunebench_probe on a
#                                 # GPU: the probe's CUDA tests, then its overhead on a GPU-bound
#                                 # (~100 ms) and a ~5 ms step, ROUNDS (default 3) interleaved rounds,
#                                 # and recorded runs (events, a torch.profiler trace of the small
#                                 # one) for lab/probe_phase_check.py; then, with .gpu/cli.tar.xz,
#                                 # the kernel-sampled steps through the CLI: GPU busy within 3
#                                 # points of the trace's kernel union (lab/probe_sample_check.py).
#   scripts/gpu-bench.sh hardware # about 6 min with the build, on an H200 (7B single needs its memory):
#                                 # what the hardware says (issue 41). 7B and Llama-3.2-1B (GQA) single,
#                                 # memory-sampled every 10 steps, with TUNEBENCH_MEMORY_SNAPSHOT files;
#                                 # 7B at micro-batch 24 running out of memory on purpose; energy of
#                                 # Llama-3.2-1B `compile fused` at micro-batch 2 and 8 and fp8 against
#                                 # bf16 (60 steps each: windows well past the energy counter's period);
#                                 # GPM availability. Snapshots in $OUT/snapshots (for tests/data/memory);
#                                 # table (lab/hardware_table.py) and, with .gpu/cli.tar.xz, the CLI's
#                                 # report of the same logs (energy, categories against the prediction,
#                                 # the out-of-memory explained) printed last.
#   scripts/gpu-bench.sh reference-check  # no build, about 3 min: scripts/pytorch_reference.py
#                                 # alone: tiny/125m/llama3.2-1b eager and torch.compile, then tiny
#                                 # through every precision, checkpointing + accumulation, DDP and
#                                 # FSDP at world size 1, and the GEMM probe; one JSON line each.
#   scripts/gpu-bench.sh ab       # about 7 min with both builds: this tree against AB_AGAINST=TARBALL,
#                                 # another commit's worker built beside it (`git archive COMMIT
#                                 # CMakeLists.txt cmake app core resources tests/gpu`). This tree's kernel
#                                 # check; the tiny model in bf16 and fp8 on the paths fused, graph, ckpt
#                                 # and accum (AB_PATHS_EXTRA="tied": also tied embeddings with
#                                 # accumulation) with both workers, whose losses must agree to the bit
#                                 # (AB_SAME_LOSSES=0 when the change is meant to move them); then
#                                 # AB_ROWS (model/amp, default 7b/bf16 llama3.2-1b/bf16 llama3.2-1b/fp8)
#                                 # `compile fused` at micro-batch 1, ROUNDS (default 2) interleaved, the
#                                 # second in the other order. Table (lab/models_check_table.py) last.
#                                 # AB_ROWS_ONLY=1: the rows alone (no kernel check, no tiny runs).
#                                 # The tool for a change that must leave the numbers alone.
#
#   Two GPUs (nvidia-h200-x2):
#   scripts/gpu-bench.sh dist     # 7B DDP / FSDP vs PyTorch, NCCL_P2P_DISABLE=1, single
#   scripts/gpu-bench.sh extra    # single vs PyTorch again, out-of-memory event, DDP bf16
#                                 # compression, DDP accumulation 4 (no_sync) vs PyTorch
#   scripts/gpu-bench.sh compile-dist  # 7B DDP/FSDP fused vs eager vs single, checkpointing vs
#                                 # PyTorch, 1B/125m trials of every strategy (prediction data)
#   scripts/gpu-bench.sh probes   # the worker's link probes over NVLink and NCCL_P2P_DISABLE=1
#                                 # (about 30 s). Writes predict-logs.tar.gz holding predict/*.jsonl:
#                                 # `tar -xzf predict-logs.tar.gz -C tests/data/gpu`.
#   scripts/gpu-bench.sh gui-live # the packed GUI runs 7B single/DDP/FSDP live, screenshots
#   scripts/gpu-bench.sh investigate  # about 3 min: issue 12 with the packed CLI (.gpu/cli.tar.xz,
#                                 # scripts/bundle.sh cli): 125m DDP autotune with a small budget and the
#                                 # exhaustive grid of the same space (GPU time and best tokens/s per GPU
#                                 # of each), then investigations of a DDP baseline with NCCL_P2P_DISABLE=1
#                                 # and of a data-bound single-GPU baseline. Sessions and outputs under
#                                 # $OUT/investigate; the summary table is printed last.
#   scripts/gpu-bench.sh waits    # no build, about 2 min on one GPU (issue 40): torch.profiler traces of
#                                 # two streams where one waits 5 ms on the other's event, a CUDA-graph
#                                 # step with 2 of 60 steps profiled, and two Gloo ranks on one GPU
#                                 # with rank 1 delayed 20 ms before each all-reduce (and through NCCL
#                                 # when two GPUs are lent), into
#                                 # waits-traces.tar.gz; the table (lab/waits_table.py) is printed last.
#   scripts/gpu-bench.sh data     # no build: torch.profiler traces of our own small job for the trace
#                                 # import's test data (tests/data/traces, lab/make_profiler_traces.py)
#
#   On a developer machine:
#   scripts/gpu-bench.sh prepare  # fills .gpu/ (see below)
#
# What the GPU machine needs: an NVIDIA GPU with PyTorch >= 2.6 for python3 (pip wheel with CUDA;
# torchrun on PATH), cmake >= 3.24, ninja and a C++17 compiler, and the nlohmann-json and CLI11
# headers (`apt-get install nlohmann-json3-dev libcli11-dev`). The worker is built against the
# wheel's libtorch (torch.utils.cmake_prefix_path); the PyTorch side is scripts/pytorch_reference.py,
# the tables are printed by lab/*.py.
# A machine without apt gets the headers in .gpu/include (git-ignored), which `prepare` fills on a
# developer machine, beside the packed CLI (investigate) and GUI (gui-live): carry .gpu/ along.
# Writes every event log and a summary table under $OUT (default ./gpu-out); prints the table last.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE="${1:-single}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT/logs"

if [ "$MODE" = prepare ]; then
  mkdir -p "$ROOT/.gpu/include"
  cp -r /usr/include/nlohmann /usr/include/CLI "$ROOT/.gpu/include/"
  # The CLI for `investigate` (the GPU machine has no SQLite) and the GUI for `gui-live` (no Qt),
  # packed with their libraries.
  if [ -x "$ROOT/build/app/cli/tunebench-cli" ]; then
    bash "$ROOT/scripts/bundle.sh" cli "$ROOT/build/app/cli/tunebench-cli" "$ROOT/.gpu/cli.tar.xz"
  fi
  if [ -x "$ROOT/build/app/gui/tunebench" ]; then
    bash "$ROOT/scripts/bundle.sh" gui "$ROOT/build/app/gui/tunebench" "$ROOT/.gpu/gui.tar.xz"
  fi
  exit 0
fi

# Never use NVLink multicast on shared machines (KINDS.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1

echo "== machine"; nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -5
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
REF="$ROOT/scripts/pytorch_reference.py"

# Python-only modes: no worker build.
if [ "$MODE" = data ]; then
  # Test data for the trace import (issue 13, tests/data/traces).
  TR="$OUT/traces"; MK="$ROOT/lab/make_profiler_traces.py"
  python3 "$MK" --out "$TR" --name single-nw0 --num-workers 0 --plain 2>&1 | grep -E "TRACE|Error|error" | head -5
  python3 "$MK" --out "$TR" --name single-nw4 --num-workers 4 2>&1 | grep -E "TRACE|Error|error" | head -5
  python3 "$MK" --out "$TR" --name single-ckpt --num-workers 4 --ckpt 2>&1 | grep -E "TRACE|Error|error" | head -5
  torchrun --standalone --nproc-per-node 2 "$MK" --out "$TR" --name ddp-nw4 --mode ddp 2>&1 | grep -E "TRACE|Error|error" | head -5
  torchrun --standalone --nproc-per-node 2 "$MK" --out "$TR" --name fsdp2-nw4 --mode fsdp2 2>&1 | grep -E "TRACE|Error|error" | head -5
  ls -la "$TR"/* | head -40
  exit 0
fi
if [ "$MODE" = waits ]; then
  # Dependency waits, short sampled steps and a delayed rank (issue 40; tests/data/traces/waits-*).
  TR="$OUT/traces"; MK="$ROOT/lab/make_profiler_traces.py"
  W=(--out "$TR" --active 3 --batch 4 --seq 256 --dim 256 --layers 4)
  timeout 120 python3 "$MK" "${W[@]}" --name waits-streams --scenario streams --delay-ms 5 2>&1 | grep -E "TRACE|Error|error|sync" | head -5
  timeout 120 python3 "$MK" "${W[@]}" --name waits-graph --scenario graph 2>&1 | grep -E "TRACE|Error|error" | head -5
  timeout 180 torchrun --standalone --nproc-per-node 2 "$MK" "${W[@]}" --name waits-gloo --scenario gloo-delay \
    --delay-ms 20 2>&1 | grep -E "TRACE|Error|error" | head -5
  if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then  # NCCL kernels: what the import's collective split reads
    timeout 180 torchrun --standalone --nproc-per-node 2 "$MK" "${W[@]}" --name waits-nccl --scenario gloo-delay \
      --backend nccl --delay-ms 20 2>&1 | grep -E "TRACE|Error|error" | head -5
  fi
  tar -czf "$OUT/waits-traces.tar.gz" -C "$OUT" traces
  ls -la "$TR"/*
  echo "== waits"; python3 "$ROOT/lab/waits_table.py" "$TR" | tee "$OUT/waits-table.txt"
  exit 0
fi
if [ "$MODE" = models-probe ]; then
  # The SDPA kernels by head size and grouping and every GEMM of every preset by shape: the lines
  # (PROBE {...}) that lab/fit_models_probe.py fits the catalogue's constants to
  # (docs/BENCHMARKS.md, "SDPA kernels and GEMMs by shape").
  python3 "$ROOT/lab/models_probe.py" 2>&1 | tee "$OUT/models-probe.txt" | grep -v '^PROBE' | tail -150
  grep '^PROBE' "$OUT/models-probe.txt" > "$OUT/models-probe.jsonl"
  echo "-- $(wc -l < "$OUT/models-probe.jsonl") probe lines in $OUT/models-probe.jsonl"
  exit 0
fi
# script: the user's-script probe (tunebench_probe, pure Python): its CUDA tests, then what it costs
# a script and recorded runs for the phase check (lab/probe_gpu_check.py). No build.
if [ "$MODE" = script ]; then
  mkdir -p "$OUT"
  export PYTHONPATH="$ROOT/app/probe${PYTHONPATH:+:$PYTHONPATH}"
  python3 "$ROOT/tests/app/probe/test_cuda.py" > "$OUT/probe-cuda-tests.txt" 2>&1; echo "probe CUDA tests: exit $?"
  tail -5 "$OUT/probe-cuda-tests.txt"
  python3 "$ROOT/lab/probe_gpu_check.py" "$OUT"
  # Kernel-sampled steps through the packed CLI (the runner reads the probe's traces): GPU busy of
  # each sampled step against the kernel union of its trace, within 3 points; sampling's cost.
  if [ -f "$ROOT/.gpu/cli.tar.xz" ]; then
    tar -xJf "$ROOT/.gpu/cli.tar.xz" -C /tmp
    TUNEBENCH_PROBE_PATH="$ROOT/app/probe" python3 "$ROOT/lab/probe_sample_check.py" "$OUT" /tmp/clibundle/run-cli.sh
    echo "probe sample check: exit $?"
  else
    echo "-- no .gpu/cli.tar.xz (scripts/gpu-bench.sh prepare): the sampled-step check is left out"
  fi
  # The window live on a script: the packed GUI runs the large shape's script under the probe
  # (kernel-sampled every 20 steps) and takes a screenshot while it runs.
  if [ -f "$ROOT/.gpu/gui.tar.xz" ]; then
    tar -xJf "$ROOT/.gpu/gui.tar.xz" -C /tmp
    python3 "$ROOT/lab/probe_gpu_check.py" --write-script "$OUT/live/train_lm.py" --config "$OUT/live/live-script.json"
    t=$(date +%s)
    TUNEBENCH_PROBE_PATH="$ROOT/app/probe" /tmp/guibundle/run-gui.sh --no-restore --config "$OUT/live/live-script.json" \
      --run --open "$OUT/live/live-script.tbsession" --size 1600x1000 --screenshot "$OUT/live-script.png" \
      --screenshot-after "${GUI_AFTER_MS:-30000}" > "$OUT/live/gui-script.log" 2>&1
    echo "-- gui script: exit $? in $(( $(date +%s) - t )) s"; tail -3 "$OUT/live/gui-script.log"
  fi
  exit 0
fi

if [ "$MODE" = reference-check ]; then
  # The reference alone, each run one RESULT line (a failure prints its last lines instead).
  python3 "$REF" --list-presets
  refcheck() {
    local name="$1"; shift
    local t=$(date +%s) log="$OUT/logs/$name.log"
    "$@" --label "$name" > "$log" 2>&1
    local rc=$?
    echo "-- $name: exit $rc in $(( $(date +%s) - t )) s"
    if grep -q '^RESULT ' "$log"; then grep '^RESULT ' "$log" | sed 's/^RESULT //'; else tail -8 "$log"; fi
  }
  one=(python3 "$REF"); tr1=(torchrun --standalone --nproc-per-node 1 "$REF")
  S=(--steps 5 --warmup 2)
  refcheck r-tiny "${one[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}"
  refcheck r-tiny-compile "${one[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}" --compile
  refcheck r-125m "${one[@]}" --model 125m --seq 1024 --batch 8 "${S[@]}"
  refcheck r-125m-compile "${one[@]}" --model 125m --seq 1024 --batch 8 "${S[@]}" --compile
  refcheck r-llama3.2-1b "${one[@]}" --model llama3.2-1b --seq 2048 --batch 1 "${S[@]}"
  refcheck r-llama3.2-1b-compile "${one[@]}" --model llama3.2-1b --seq 2048 --batch 1 "${S[@]}" --compile
  for amp in fp32 tf32 fp16 pure-bf16; do
    refcheck r-tiny-$amp "${one[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}" --amp $amp
  done
  refcheck r-tiny-ckpt-accum2 "${one[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}" --ckpt --accum 2
  refcheck r-tiny-gqa-tie "${one[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}" --kv-heads 2 --tie --rope-theta 500000
  refcheck r-tiny-ddp "${tr1[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}" --mode ddp --accum 2 --no-sync --compression bf16
  refcheck r-tiny-fsdp "${tr1[@]}" --model tiny --seq 1024 --batch 8 "${S[@]}" --mode fsdp --fsdp-mode shard_grad_op
  refcheck r-gemm-7b "${one[@]}" --probe gemm --model 7b --amp fp8
  exit 0
fi

# models-final: one row per shape, "name|worker model flags|reference model flags" at LAYERS layers.
LAYERS="${LAYERS:-4}"
FINAL_ROWS=(
  "7b|--dim 4096 --heads 32 --ffn 11008 --vocab 32000|--dim 4096 --heads 32 --ffn 11008 --vocab 32000"
  "llama3.1-8b|--dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --rope-theta 500000|--dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --rope-theta 500000"
  "mistral-7b|--dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 32768 --rope-theta 1000000|--dim 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 32768 --rope-theta 1000000"
  "qwen2.5-7b|--dim 3584 --heads 28 --kv-heads 4 --ffn 18944 --vocab 152064 --rope-theta 1000000|--dim 3584 --heads 28 --kv-heads 4 --ffn 18944 --vocab 152064 --rope-theta 1000000"
  "phi3-mini|--dim 3072 --heads 32 --ffn 8192 --vocab 32064|--dim 3072 --heads 32 --ffn 8192 --vocab 32064"
  "llama3.2-1b|--dim 2048 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --tie-embeddings true --rope-theta 500000|--dim 2048 --heads 32 --kv-heads 8 --ffn 8192 --vocab 128256 --tie --rope-theta 500000"
  "hd80|--dim 2560 --heads 32 --kv-heads 8 --ffn 6912 --vocab 50304|--dim 2560 --heads 32 --kv-heads 8 --ffn 6912 --vocab 50304"
  "hd112|--dim 3584 --heads 32 --kv-heads 8 --ffn 9728 --vocab 32000|--dim 3584 --heads 32 --kv-heads 8 --ffn 9728 --vocab 32000"
  "hd100|--dim 3200 --heads 32 --ffn 8640 --vocab 32000|--dim 3200 --heads 32 --ffn 8640 --vocab 32000"
)
FINAL_REF=(--model 7b --layers "$LAYERS" --seq 2048 --batch 1 --compile)
# The worker side of every row (models-final, models-check): compile fused, kernel sampling off.
FINAL_S=(--device cuda --seq-len 2048 --micro-batch 1 --amp bf16 --steps 8 --warmup 3 --compile fused
         --kernel-sample-every 0 --kernel-sample-steps 0)
# final_row NAME WORKER_FLAGS: the row's configuration into $OUT/configs and its run, at LAYERS layers.
final_row() {
  local -a WM
  read -r -a WM <<< "--model custom --layers $LAYERS $2"
  mkdir -p "$OUT/configs"
  "$W" --events file:/dev/null "${WM[@]}" "${FINAL_S[@]}" --print-config > "$OUT/configs/w-$1.json" 2>/dev/null
  run "w-$1" "${WM[@]}" "${FINAL_S[@]}"
}
if [ "$MODE" = models-final ]; then
  # torch.compile's compiles (Dynamo, Inductor, Triton) land in the on-disk caches: run them now,
  # three at a time while the worker builds, so that the timed runs below mostly read the caches.
  mkdir -p "$OUT/logs/prewarm"
  prewarm() {
    local n="$1"; shift
    python3 "$REF" --label "warm-$n" "$@" --steps 1 --warmup 1 > "$OUT/logs/prewarm/$n.log" 2>&1
  }
  (
    i=0
    for row in "${FINAL_ROWS[@]}"; do
      IFS='|' read -r n _ rf <<< "$row"
      read -r -a RM <<< "$rf"
      prewarm "$n" "${FINAL_REF[@]}" "${RM[@]}" &
      i=$((i + 1)); [ $((i % 3)) -eq 0 ] && wait
    done
    wait
  ) &
  PREWARM_PID=$!
fi

echo "== build"
if ! [ -f "$ROOT/.gpu/include/nlohmann/json.hpp" ] && ! [ -f /usr/include/nlohmann/json.hpp ] &&
   ! [ -f /usr/local/include/nlohmann/json.hpp ]; then
  echo "no nlohmann-json headers: apt-get install nlohmann-json3-dev libcli11-dev, or carry .gpu/include" \
       "from 'scripts/gpu-bench.sh prepare' on a developer machine" >&2
  exit 1
fi
PREFIX="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"  # H100/H200 (sm_90) for the fused kernels
BUILD="$ROOT/build-cuda"
# configure_worker SOURCE BUILD LOG: the worker's CMake build against the wheel's libtorch.
configure_worker() {
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DTUNEBENCH_BUILD_GUI=OFF -DTUNEBENCH_BUILD_TESTS=OFF -DTUNEBENCH_HEADER_DIR="$ROOT/.gpu/include" > "$3" 2>&1
}
t0=$(date +%s)
configure_worker "$ROOT" "$BUILD" "$OUT/logs/cmake.log" || { tail -40 "$OUT/logs/cmake.log"; exit 1; }
grep -E "Tunebench" "$OUT/logs/cmake.log"
TARGETS=(tunebench-worker)
case "$MODE" in kernels|kernels7b|compile-dist|gemm-search|ab|grads) TARGETS+=(tunebench-kernel-check) ;; esac
if ! ninja -C "$BUILD" "${TARGETS[@]}" > "$OUT/logs/build.log" 2>&1; then
  grep -E "error|Error" -A3 "$OUT/logs/build.log" | head -60
  # A kernel-sampling build problem must not cost the call: once more without CUPTI (Kineto's path).
  echo "-- build failed; again with -DTUNEBENCH_CUPTI=OFF"
  cmake "$BUILD" -DTUNEBENCH_CUPTI=OFF > /dev/null 2>&1
  ninja -C "$BUILD" "${TARGETS[@]}" > "$OUT/logs/build2.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/logs/build2.log" | head -40; exit 1; }
fi
echo "built in $(( $(date +%s) - t0 )) s"
W="$BUILD/app/worker/tunebench-worker"
# build_against TARBALL: another commit's worker (`git archive` of it), built beside this one;
# prints its path, or nothing when it does not build.
build_against() {
  local a="$ROOT/build-cuda-against"
  rm -rf "$a/src"; mkdir -p "$a/src"; tar -xf "$1" -C "$a/src"
  if configure_worker "$a/src" "$a/build" "$OUT/logs/cmake-against.log" &&
     ninja -C "$a/build" tunebench-worker > "$OUT/logs/build-against.log" 2>&1; then
    echo "$a/build/app/worker/tunebench-worker"
  else
    grep -E "error" -A3 "$OUT/logs/build-against.log" "$OUT/logs/cmake-against.log" | head -20 >&2
  fi
}
RESULTS="$OUT/results.tsv"
: > "$RESULTS"

# run NAME [worker flags...]: one worker run (torchrun when --world-size N > 1), logged.
# run_limits: the wrapper of every run in the caller's `limit` array. RUN_TIMEOUT=S ends a run that
# may hang (an experiment) after S seconds; PIN=CPUS keeps it on those cores (taskset), so its host
# threads do not move between cores.
run_limits() {
  limit=()
  [ -n "${RUN_TIMEOUT:-}" ] && limit=(timeout "$RUN_TIMEOUT")
  [ -n "${PIN:-}" ] && limit+=(taskset -c "$PIN")
  return 0
}

run() {
  local name="$1"; shift
  local log="$OUT/logs/$name.jsonl" world=1 args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "--world-size" ] && world="${args[$((i + 1))]}"; done
  rm -f "$log"
  local t=$(date +%s)
  local limit; run_limits
  if [ "$world" -gt 1 ]; then
    torchrun --standalone --nproc-per-node "$world" --no-python "$W" --events "file:$log" --trial "$name" \
      "$@" > "$OUT/logs/$name.stderr" 2>&1
  else
    "${limit[@]}" "$W" --events "file:$log" --trial "$name" "$@" > "$OUT/logs/$name.stderr" 2>&1
  fi
  local rc=$?
  echo "-- $name: exit $rc in $(( $(date +%s) - t )) s"; [ $rc -ne 0 ] && tail -5 "$OUT/logs/$name.stderr"
  printf 'worker\t%s\t%s\n' "$name" "$log" >> "$RESULTS"
}

# interleaved_rows ROWS A B FLAGS...: each model/amp row of ROWS `compile fused` at micro-batch 1,
# ROUNDS (default 2) rounds, variant A before B in odd rounds and after it in even ones; each run
# as run_variant VARIANT NAME FLAGS... (the caller's function, setting what the variant changes).
interleaved_rows() {
  local rows="$1" a="$2" b="$3"; shift 3
  local k r m amp g order
  for k in $(seq "${ROUNDS:-2}"); do
    order=("$a" "$b"); [ $((k % 2)) -eq 0 ] && order=("$b" "$a")
    for r in $rows; do
      m="${r%/*}"; amp="${r#*/}"
      for g in "${order[@]}"; do run_variant "$g" "$m-$amp-$g-$k" --model "$m" --amp "$amp" "$@"; done
    done
  done
}

# print_losses LOG...: "NAME losses: l1 l2 ..." per worker log, the loss of every step.
print_losses() {
  for f in "$@"; do
    printf '%s losses: ' "$(basename "$f" .jsonl)"
    python3 -c 'import json,sys; print(" ".join("%.6f" % e["loss"] for e in map(json.loads, open(sys.argv[1])) if e.get("type") == "step"))' "$f"
  done
}

# ref NAME WORLD [reference flags...]: the PyTorch reference with the same settings.
ref() {
  local name="$1" world="$2"; shift 2
  local t=$(date +%s)
  local limit; run_limits
  if [ "$world" -gt 1 ]; then
    torchrun --standalone --nproc-per-node "$world" "$REF" --label "$name" "$@" > "$OUT/logs/$name.log" 2>&1
  else
    python3 "$REF" --label "$name" "$@" > "$OUT/logs/$name.log" 2>&1
  fi
  echo "-- $name: exit $? in $(( $(date +%s) - t )) s"
  grep RESULT "$OUT/logs/$name.log" | sed 's/^RESULT //' | while read -r j; do printf 'ref\t%s\t%s\n' "$name" "$j" >> "$RESULTS"; done
}

# predict_configs: with the packed CLI (.gpu/cli.tar.xz), the step-time and memory prediction of each
# $OUT/configs/*.json, calibrated on the example session, into $OUT/predict (one JSON each).
predict_configs() {
  [ -f "$ROOT/.gpu/cli.tar.xz" ] || { echo "-- no .gpu/cli.tar.xz: predictions left out"; return 0; }
  tar -xJf "$ROOT/.gpu/cli.tar.xz" -C /tmp
  mkdir -p "$OUT/predict"
  for cfg in "$OUT"/configs/*.json; do
    /tmp/clibundle/run-cli.sh predict --config "$cfg" --gpu h200 --evidence "$ROOT/sessions/h200-7b.tbsession" \
      --json > "$OUT/predict/$(basename "$cfg")" 2> /dev/null
  done
}

B7=(--model 7b --device cuda --seq-len 2048 --micro-batch 1 --amp bf16 --steps 11 --warmup 3)
B125=(--model 125m --device cuda --seq-len 1024 --micro-batch 8 --amp bf16 --steps 23 --warmup 3)
case "$MODE" in
  kernels)
    # Issue 10, part 1: the fused kernels' correctness, then 125m eager / fused / graph / fp8 against
    # PyTorch eager and torch.compile, then 300-step loss curves on a token file.
    "$BUILD/tests/gpu/tunebench-kernel-check" 2>&1 | tee "$OUT/kernel-check.txt" | tail -40
    run w-125m "${B125[@]}"
    run w-125m-fused "${B125[@]}" --compile fused
    run w-125m-graph "${B125[@]}" --compile graph
    run w-125m-fusedgraph "${B125[@]}" --compile fused+graph
    run w-125m-fp8 "${B125[@]}" --amp fp8 --compile fused
    run w-125m-fp8graph "${B125[@]}" --amp fp8 --compile fused+graph
    ref r-125m 1 --model 125m --mode single --seq 1024 --batch 8 --amp bf16 --steps 20 --warmup 3
    ref r-125m-compile 1 --model 125m --mode single --seq 1024 --batch 8 --amp bf16 --steps 20 --warmup 3 --compile
    python3 "$ROOT/lab/make_token_file.py" /tmp/tokens.bin --tokens 3000000 > /dev/null
    # Two eager runs that differ only in the seed give the run-to-run band the others are held to.
    L=(--model 125m --device cuda --seq-len 1024 --micro-batch 8 --steps 500 --warmup 1 --lr 6e-4
       --data file --data-path /tmp/tokens.bin --timing false)
    run loss-bf16 "${L[@]}" --amp bf16
    run loss-bf16-seed1 "${L[@]}" --amp bf16 --seed 1
    run loss-fused "${L[@]}" --amp bf16 --compile fused
    run loss-fp8 "${L[@]}" --amp fp8 --compile fused
    python3 "$ROOT/lab/loss_band.py" "$OUT/logs/loss-bf16.jsonl" --seed-run "$OUT/logs/loss-bf16-seed1.jsonl" \
      "$OUT/logs/loss-fused.jsonl" "$OUT/logs/loss-fp8.jsonl" | tee "$OUT/loss-band.txt"
    ;;
  compile-dist)
    # Issue 10, part 3 (2 GPUs): compile fused with DDP and FSDP at 7B against eager and against
    # single in the same call; checkpointing against PyTorch's; 1B and 125m trials of every strategy
    # for the prediction's accuracy table (issue 11).
    "$BUILD/tests/gpu/tunebench-kernel-check" > "$OUT/kernel-check.txt" 2>&1; tail -3 "$OUT/kernel-check.txt"
    run w-7b-single "${B7[@]}"
    run w-7b-single-fused "${B7[@]}" --compile fused
    run w-7b-ddp "${B7[@]}" --strategy ddp --world-size 2
    run w-7b-ddp-fused "${B7[@]}" --strategy ddp --world-size 2 --compile fused
    run w-7b-ddp-fused-bf16 "${B7[@]}" --strategy ddp --world-size 2 --compile fused --compression bf16
    run w-7b-single-ckpt "${B7[@]}" --checkpointing true
    run w-7b-single-ckpt-fused "${B7[@]}" --checkpointing true --compile fused
    run w-7b-ddp-ckpt "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true
    run w-7b-ddp-ckpt-fused "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true --compile fused
    run w-7b-fsdp "${B7[@]}" --strategy fsdp --world-size 2
    run w-7b-fsdp-fused "${B7[@]}" --strategy fsdp --world-size 2 --compile fused
    run w-7b-fsdp-gradop-fused "${B7[@]}" --strategy fsdp --world-size 2 --compile fused --fsdp-mode shard_grad_op
    run w-7b-fsdp-fp8 "${B7[@]}" --strategy fsdp --world-size 2 --compile fused --amp fp8
    ref r-7b-single-ckpt 1 --model 7b --mode single --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3 --ckpt
    ref r-7b-ddp-ckpt 2 --model 7b --mode ddp --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3 --ckpt
    ref r-7b-fsdp 2 --model 7b --mode fsdp --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3
    B1=(--model 1b --device cuda --seq-len 2048 --micro-batch 2 --amp bf16 --steps 11 --warmup 3)
    run w-1b-single "${B1[@]}"
    run w-1b-single-ckpt "${B1[@]}" --checkpointing true
    run w-1b-single-fused "${B1[@]}" --compile fused
    run w-1b-ddp "${B1[@]}" --strategy ddp --world-size 2
    run w-1b-ddp-accum2 "${B1[@]}" --strategy ddp --world-size 2 --grad-accum 2
    run w-1b-ddp-bf16 "${B1[@]}" --strategy ddp --world-size 2 --compression bf16
    run w-1b-ddp-nop2p "${B1[@]}" --strategy ddp --world-size 2 --nccl-env NCCL_P2P_DISABLE=1
    run w-1b-fsdp "${B1[@]}" --strategy fsdp --world-size 2
    run w-1b-fsdp-gradop "${B1[@]}" --strategy fsdp --world-size 2 --fsdp-mode shard_grad_op
    run w-125m-ddp "${B125[@]}" --strategy ddp --world-size 2
    run w-125m-fsdp "${B125[@]}" --strategy fsdp --world-size 2
    ;;
  gui-live)
    # Issue 14: the GUI (packed by `scripts/bundle.sh gui` into .gpu/gui.tar.xz by `prepare` on a
    # developer machine) drives real CUDA workers offscreen; one screenshot of each live 7B run.
    # A preset's config with 200 steps (.gpu/live-PRESET.json, from `tunebench-worker --preset P
    # --steps 200 --print-config`) keeps the run going when the screenshot is taken; the GUI then
    # quits, which stops the ranks.
    tar -xJf "$ROOT/.gpu/gui.tar.xz" -C /tmp
    # GUI_PRESETS picks others: GUI_PRESETS=llama3.1-8b-single for the grouped-query preset on one GPU.
    for p in ${GUI_PRESETS:-7b-single-fused 7b-ddp 7b-fsdp}; do
      t=$(date +%s)
      if [ -f "$ROOT/.gpu/live-$p.json" ]; then start=(--config "$ROOT/.gpu/live-$p.json"); else start=(--preset "$p"); fi
      /tmp/guibundle/run-gui.sh --no-restore --worker "$W" "${start[@]}" --run --open "$OUT/logs/live-$p.tbsession" \
        --size 1600x1000 --screenshot "$OUT/live-$p.png" --screenshot-after "${GUI_AFTER_MS:-15000}" \
        > "$OUT/logs/gui-$p.log" 2>&1
      echo "-- gui $p: exit $? in $(( $(date +%s) - t )) s"
    done
    ;;
  kernels7b)
    # Issue 10, part 2: 7B single, eager against fused / fused+graph / fp8 and PyTorch (+compile).
    run w-7b "${B7[@]}"
    ref r-7b 1 --model 7b --mode single --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3
    run w-7b-fused "${B7[@]}" --compile fused
    run w-7b-fusedgraph "${B7[@]}" --compile fused+graph
    run w-7b-fp8 "${B7[@]}" --amp fp8 --compile fused
    ref r-7b-compile 1 --model 7b --mode single --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3 --compile
    ;;
  idle)
    TR="$OUT/traces"; MK="$ROOT/lab/make_profiler_traces.py"
    if [ -z "${IDLE_SKIP_TRACES:-}" ]; then
    T=(--out "$TR" --num-workers 2 --sample-cpu-ms 0.5 --active 3 --no-shapes)
    python3 "$MK" "${T[@]}" --name cnn-b8 --model cnn --batch 8 2>&1 | grep -E "TRACE|Error|error" | head -3
    python3 "$MK" "${T[@]}" --name gpt-item --item-every-step --batch 4 --seq 256 --dim 256 --layers 4 2>&1 \
      | grep -E "TRACE|Error|error" | head -3
    python3 "$MK" "${T[@]}" --name gpt-gpubound --batch 16 --seq 1024 --dim 2048 --layers 8 2>&1 \
      | grep -E "TRACE|Error|error" | head -3
    if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
      torchrun --standalone --nproc-per-node 2 "$MK" "${T[@]}" --name cnn-b8-ddp --model cnn --batch 8 --mode ddp 2>&1 \
        | grep -E "TRACE|Error|error" | head -3
    else
      echo "-- cnn-b8-ddp: skipped (needs 2 GPUs)"
    fi
    fi
    TINY=(--model tiny --device cuda --seq-len 256 --micro-batch 4 --amp bf16 --steps 200 --warmup 10)
    run tiny-sampled "${TINY[@]}"
    run tiny-fusedgraph-sampled "${TINY[@]}" --compile fused+graph
    # Timed against untimed, interleaved three times: a launch-bound 12 ms step varies by more
    # between runs than the timeline's few CUDA events per step can cost.
    # IDLE_QUICK=1 (a short device budget): one pair, and no 7B timed/untimed (their cost was
    # measured on 2026-12-02: +0.21 / +0.55 %).
    rounds=3; [ -n "${IDLE_QUICK:-}" ] && rounds=1
    for k in $(seq "$rounds"); do
      run tiny-untimed-$k "${TINY[@]}" --timing false
      run tiny-timed-$k "${TINY[@]}" --kernel-sample-every 0
    done
    run 7b-sampled "${B7[@]}" --steps 15 --kernel-sample-every 4 --kernel-sample-steps 2
    run 7b-fused-sampled "${B7[@]}" --steps 15 --kernel-sample-every 4 --kernel-sample-steps 2 --compile fused
    if [ -z "${IDLE_QUICK:-}" ]; then
      run 7b-untimed "${B7[@]}" --timing false
      run 7b-timed "${B7[@]}" --kernel-sample-every 0
    fi
    [ -d "$OUT/traces" ] && tar -czf "$OUT/idle-traces.tar.gz" -C "$OUT" traces
    ;;
  smoke)
    run smoke-single --model tiny --device cuda --steps 3 --warmup 1 --amp bf16
    # Kernel sampling (2 of every 20 steps, the default) with its sample dump: the host ops must
    # land inside their steps' windows on the host clock (lab/sampler_dump_summary.py --clock).
    TUNEBENCH_SAMPLER_DUMP="$OUT/logs/smoke-sampled.dump" \
      run smoke-sampled --model tiny --device cuda --seq-len 256 --micro-batch 4 --steps 60 --warmup 2 --amp bf16
    python3 "$ROOT/lab/sampler_dump_summary.py" --clock "$OUT/logs/smoke-sampled.dump" || true
    ;;
  single)
    run smoke-tiny --model tiny --device cuda --steps 4 --warmup 1 --amp bf16
    run w-7b-single "${B7[@]}"
    ref r-7b-single 1 --model 7b --mode single --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3
    run w-7b-single-untimed "${B7[@]}" --timing false
    run w-7b-single-compile "${B7[@]}" --compile true
    run w-7b-single-ckpt "${B7[@]}" --checkpointing true
    ref r-7b-single-ckpt 1 --model 7b --mode single --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3 --ckpt
    ;;
  dist)
    run w-7b-ddp "${B7[@]}" --strategy ddp --world-size 2
    run w-7b-ddp-ckpt "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true
    ref r-7b-ddp-ckpt 2 --model 7b --mode ddp --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3 --ckpt
    run w-7b-fsdp-full "${B7[@]}" --strategy fsdp --world-size 2
    run w-7b-fsdp-gradop "${B7[@]}" --strategy fsdp --world-size 2 --fsdp-mode shard_grad_op
    ref r-7b-fsdp 2 --model 7b --mode fsdp --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3
    run w-7b-ddp-ckpt-nop2p "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true \
      --nccl-env NCCL_P2P_DISABLE=1
    run w-7b-single-ckpt "${B7[@]}" --checkpointing true
    run w-7b-single "${B7[@]}"
    run w-7b-single-compile "${B7[@]}" --compile true
    ;;
  extra)
    run w-7b-single "${B7[@]}"
    ref r-7b-single 1 --model 7b --mode single --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3
    run w-7b-oom "${B7[@]}" --micro-batch 64 --steps 2 --warmup 1
    grep -h '"type":"error"' "$OUT/logs/w-7b-oom.jsonl" | cut -c1-400
    run w-7b-ddp-ckpt "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true
    run w-7b-ddp-ckpt-bf16 "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true --compression bf16
    run w-7b-ddp-ckpt-accum4 "${B7[@]}" --strategy ddp --world-size 2 --checkpointing true --grad-accum 4
    ref r-7b-ddp-ckpt-accum4 2 --model 7b --mode ddp --seq 2048 --batch 1 --amp bf16 --steps 8 --warmup 3 --ckpt \
      --accum 4 --no-sync
    ;;
  probes)
    # The link probes of `predict` alone (about 30 s): NVLink, NCCL_P2P_DISABLE=1, and that again.
    run h200x2-probe-nvlink --probe-link --device cuda --world-size 2 --probe-min-mb 1 --probe-max-mb 1024
    run h200x2-probe-nop2p --probe-link --device cuda --world-size 2 --probe-min-mb 1 --probe-max-mb 1024 \
      --nccl-env NCCL_P2P_DISABLE=1
    run h200x2-probe-nop2p-2 --probe-link --device cuda --world-size 2 --probe-min-mb 1 --probe-max-mb 1024 \
      --nccl-env NCCL_P2P_DISABLE=1
    mkdir -p "$OUT/predict" && cp "$OUT"/logs/*.jsonl "$OUT/predict/"
    tar -czf "$OUT/predict-logs.tar.gz" -C "$OUT" predict && rm -rf "$OUT/predict"
    ;;
  investigate)
    bash "$ROOT/scripts/gpu-investigate.sh" "$W" "$OUT/investigate"
    ;;
  models-final)
    # Wait for the pre-warm compiles (they hold the GPU), then time each row: worker compile fused,
    # torch.compile at the same shape, the configuration for the prediction.
    wait "$PREWARM_PID"
    echo "-- prewarm: $(grep -l '^RESULT' "$OUT"/logs/prewarm/*.log 2>/dev/null | wc -l) of ${#FINAL_ROWS[@]} compiled"
    for row in "${FINAL_ROWS[@]}"; do
      IFS='|' read -r n wf rf <<< "$row"
      read -r -a RM <<< "$rf"
      final_row "$n" "$wf"
      ref "r-$n" 1 "${FINAL_REF[@]}" "${RM[@]}" --steps 5 --warmup 2
    done
    predict_configs
    python3 "$ROOT/lab/models_final_table.py" "$RESULTS" "$OUT/predict" "$LAYERS" > "$OUT/models-table.txt"
    ;;
  models-check)
    python3 "$ROOT/lab/models_probe.py" --only gemm > "$OUT/gemm-probe.txt" 2>&1
    echo "-- gemm probe: $(grep -c '^PROBE' "$OUT/gemm-probe.txt") GEMMs"; grep '^PROBE' "$OUT/gemm-probe.txt" > "$OUT/gemm-probe.jsonl"
    grep -A12 "all GEMMs of a step" "$OUT/gemm-probe.txt"
    export TUNEBENCH_MEMORY_PHASES=1
    for row in "${FINAL_ROWS[@]}"; do
      IFS='|' read -r n wf _ <<< "$row"
      final_row "$n" "$wf"
    done
    # Full depth, for the memory model (fewer steps: the peak is reached in the first one).
    F=(--device cuda --seq-len 2048 --micro-batch 1 --amp bf16 --steps 4 --warmup 2 --compile fused
       --kernel-sample-every 0 --kernel-sample-steps 0)
    for m in llama3.2-1b phi3-mini llama3.1-8b qwen2.5-7b mistral-7b; do
      "$W" --events file:/dev/null --model "$m" "${F[@]}" --print-config > "$OUT/configs/full-$m.json" 2>/dev/null
      run "full-$m" --model "$m" "${F[@]}"
    done
    for x in "hd80|--dim 2560 --layers 24 --heads 32 --kv-heads 8 --ffn 6912 --vocab 50304" \
             "hd112|--dim 3584 --layers 24 --heads 32 --kv-heads 8 --ffn 9728 --vocab 32000"; do
      IFS='|' read -r n wf <<< "$x"; read -r -a WM <<< "--model custom $wf"
      "$W" --events file:/dev/null "${WM[@]}" "${F[@]}" --print-config > "$OUT/configs/full-$n.json" 2>/dev/null
      run "full-$n" "${WM[@]}" "${F[@]}"
    done
    unset TUNEBENCH_MEMORY_PHASES
    python3 "$ROOT/lab/models_check_table.py" "$OUT/logs" > "$OUT/models-table.txt"
    mkdir -p "$OUT/keep" && cp "$OUT"/logs/*.jsonl "$OUT/keep/"
    ;;
  sampling)
    TINY=(--model tiny --device cuda --seq-len 256 --micro-batch 4 --amp bf16 --steps 200 --warmup 10)
    # Interleaved pairs: a launch-bound 14 ms step varies by several per cent between processes.
    for k in $(seq "${PAIRS:-6}"); do
      run tiny-untimed-$k "${TINY[@]}" --timing false
      run tiny-sampled-$k "${TINY[@]}"
    done
    run tiny-fusedgraph-sampled "${TINY[@]}" --compile fused+graph
    run 7b-fused-untimed "${B7[@]}" --compile fused --timing false
    run 7b-fused-sampled "${B7[@]}" --steps 15 --kernel-sample-every 4 --kernel-sample-steps 2 --compile fused
    run 7b-fusedgraph "${B7[@]}" --compile fused+graph --kernel-sample-every 0
    grep -h '"kernel sampling\|kernel-sampling' "$OUT"/logs/*.jsonl | cut -c1-300 | sort | uniq -c | head
    mkdir -p "$OUT/keep" && cp "$OUT"/logs/tiny-*-1.jsonl "$OUT"/logs/tiny-fusedgraph-sampled.jsonl "$OUT/keep/" 2>/dev/null
    python3 "$ROOT/lab/idle_table.py" "$OUT/logs" > "$OUT/models-table.txt"
    ;;
  overlap)
    # optimizer_overlap: the 7B `compile fused` step with each block's AdamW queued under the
    # backward on a second stream, against the serial update, interleaved ROUNDS (default 2) rounds,
    # kernel sampling off, the allocator's peak per phase; then the tiny model both ways (the same
    # losses). Table printed last (models_check_table.py, then the tiny runs' losses).
    export TUNEBENCH_MEMORY_PHASES=1
    for k in $(seq "${ROUNDS:-2}"); do
      run 7b-fused-serial-$k "${B7[@]}" --compile fused --kernel-sample-every 0
      run 7b-fused-overlap-$k "${B7[@]}" --compile fused --kernel-sample-every 0 --optimizer-overlap true
    done
    grep -h '"warning"' "$OUT"/logs/*.jsonl | cut -c1-300 | sort | uniq -c | head
    TINY_O=(--model tiny --device cuda --seq-len 256 --micro-batch 4 --amp bf16 --compile fused --steps 12 --warmup 2
            --kernel-sample-every 0)
    run tiny-serial "${TINY_O[@]}"
    run tiny-overlap "${TINY_O[@]}" --optimizer-overlap true
    python3 "$ROOT/lab/models_check_table.py" "$OUT/logs" > "$OUT/overlap-table.txt"
    print_losses "$OUT"/logs/tiny-*.jsonl >> "$OUT/overlap-table.txt"
    ;;
  models-eager)
    # models-final's rows at LAYERS layers: the worker's eager step against PyTorch eager at the same
    # shape, and its fp8 + fused step against bf16 fused, all in this call (kernel sampling off).
    EAGER_S=(--device cuda --seq-len 2048 --micro-batch 1 --amp bf16 --steps 8 --warmup 3 --kernel-sample-every 0
             --kernel-sample-steps 0)
    for row in "${FINAL_ROWS[@]}"; do
      IFS='|' read -r n wf rf <<< "$row"
      read -r -a WM <<< "--model custom --layers $LAYERS $wf"
      read -r -a RM <<< "$rf"
      run "w-$n" "${WM[@]}" "${EAGER_S[@]}"
      ref "r-$n" 1 --model 7b --layers "$LAYERS" --seq 2048 --batch 1 "${RM[@]}" --steps 5 --warmup 2
      run "w-$n-fused" "${WM[@]}" "${EAGER_S[@]}" --compile fused
      run "w-$n-fp8" "${WM[@]}" "${EAGER_S[@]}" --compile fused --amp fp8
    done
    python3 "$ROOT/lab/models_eager_table.py" "$RESULTS" "$LAYERS" > "$OUT/models-table.txt"
    ;;
  models-fp8)
    # Full depth: fp8 + fused against bf16 fused per model, interleaved rounds; round 2 runs fp8 first
    # so that a drift of the machine's speed over the call does not favour one side.
    export TUNEBENCH_MEMORY_PHASES=1
    FP8_ROWS=("7b|--model 7b" "llama3.1-8b|--model llama3.1-8b" "mistral-7b|--model mistral-7b"
              "qwen2.5-7b|--model qwen2.5-7b" "phi3-mini|--model phi3-mini" "llama3.2-1b|--model llama3.2-1b"
              "hd80|--model custom --dim 2560 --layers 24 --heads 32 --kv-heads 8 --ffn 6912 --vocab 50304"
              "hd112|--model custom --dim 3584 --layers 24 --heads 32 --kv-heads 8 --ffn 9728 --vocab 32000"
              "hd100|--model custom --dim 3200 --layers 26 --heads 32 --ffn 8640 --vocab 32000")
    FP8_S=(--device cuda --seq-len 2048 --micro-batch "${FP8_MB:-1}" --steps "${FP8_STEPS:-8}" --warmup 3
           --compile fused)
    FP8_OFF=(--kernel-sample-every 0 --kernel-sample-steps 0)
    chosen() { [ -z "${FP8_ONLY:-}" ] || [[ " $FP8_ONLY " == *" $1 "* ]]; }
    for k in $(seq "${ROUNDS:-2}"); do
      for row in "${FP8_ROWS[@]}"; do
        IFS='|' read -r n wf <<< "$row"; read -r -a WM <<< "$wf"
        chosen "$n" || continue
        order=(bf16 fp8); [ $((k % 2)) -eq 0 ] && order=(fp8 bf16)
        for amp in "${order[@]}"; do
          run "$n-$amp-$k" "${WM[@]}" "${FP8_S[@]}" "${FP8_OFF[@]}" --amp "$amp"
        done
      done
    done
    python3 "$ROOT/lab/models_fp8_table.py" "$OUT/logs" >> "$OUT/models-table.txt"
    ;;
  mfu7b)
    # The 7B `compile fused` at micro-batch 1, 2 and 3 (the reference's MFU, llm-foundry's MPT-7B on
    # H100, runs its micro-batch at what fits), two interleaved rounds, kernel sampling off, the
    # allocator's peak per phase. Table printed last (lab/models_check_table.py).
    export TUNEBENCH_MEMORY_PHASES=1
    for k in $(seq "${ROUNDS:-2}"); do
      for mb in 1 2 3; do
        run 7b-fused-mb$mb-$k "${B7[@]}" --compile fused --kernel-sample-every 0 --micro-batch "$mb"
      done
    done
    python3 "$ROOT/lab/models_check_table.py" "$OUT/logs" > "$OUT/models-table.txt"
    ;;
  grads)
    # grad_dtype: the blocks' matmul weights' gradients in bf16 (as autocast rounds them) against
    # fp32. The kernel check first (AdamW reading bf16 gradients must give, bit for bit, the update
    # from their fp32 values), the tiny model's losses (fp32, bf16, and eager: autocast's rounding),
    # then the rows, interleaved.
    export TUNEBENCH_MEMORY_PHASES=1
    "$BUILD/tests/gpu/tunebench-kernel-check" > "$OUT/kernel-check.txt" 2>&1
    echo "-- kernel check: exit $?"
    { echo "== kernel check (adamw)"; grep -E "^adamw|FAIL" "$OUT/kernel-check.txt"; } > "$OUT/grads-table.txt"
    TINY_G=(--model tiny --device cuda --seq-len 256 --micro-batch 4 --amp bf16 --steps 12 --warmup 2
            --kernel-sample-every 0)
    run tiny-grads-fp32 "${TINY_G[@]}" --compile fused
    run tiny-grads-bf16 "${TINY_G[@]}" --compile fused --grad-dtype bf16
    run tiny-grads-bf16-ckpt "${TINY_G[@]}" --compile fused --grad-dtype bf16 --checkpointing true
    run tiny-grads-fp32-clip "${TINY_G[@]}" --compile fused --grad-clip 0.5
    run tiny-grads-bf16-clip "${TINY_G[@]}" --compile fused --grad-dtype bf16 --grad-clip 0.5
    run tiny-grads-eager "${TINY_G[@]}"
    grep -h '"warning"' "$OUT"/logs/tiny-grads-*.jsonl | cut -c1-300 | sort | uniq -c | head >> "$OUT/grads-table.txt"
    print_losses "$OUT"/logs/tiny-grads-*.jsonl >> "$OUT/grads-table.txt"
    for k in $(seq "${ROUNDS:-2}"); do
      for m in ${GR_ROWS:-7b llama3.2-1b}; do
        order=(fp32 bf16); [ $((k % 2)) -eq 0 ] && order=(bf16 fp32)
        for g in "${order[@]}"; do
          run "$m-grads-$g-$k" --model "$m" --device cuda --seq-len 2048 --micro-batch 1 --amp bf16 --steps 11 \
            --warmup 3 --compile fused --kernel-sample-every 0 --grad-dtype "$g"
        done
      done
    done
    python3 "$ROOT/lab/models_check_table.py" "$OUT/logs" >> "$OUT/grads-table.txt"
    ;;
  gemm-search)
    # The GEMM algorithm search (core/engine/kernels/gemm_search.h) against cuBLAS's pick
    # (TUNEBENCH_GEMM=cublas): the kernel check (gemm rows: bit-identical on fresh operands, and the
    # 7B block's twelve GEMMs timed both ways), the tiny model's losses both ways (must be identical),
    # then GS_ROWS (model/amp, default the 7B in bf16 and Llama-3.2-1B in bf16 and fp8) `compile
    # fused` at micro-batch 1, ROUNDS (default 2) interleaved rounds, the second in the other order.
    # Table printed last (lab/models_check_table.py).
    export TUNEBENCH_MEMORY_PHASES=1
    TUNEBENCH_GEMM_LOG=1 "$BUILD/tests/gpu/tunebench-kernel-check" > "$OUT/kernel-check.txt" 2>&1
    echo "-- kernel check: exit $?"
    { echo "== kernel check (gemm)"; grep -E "^gemm|^GEMM|FAIL" "$OUT/kernel-check.txt"; } > "$OUT/models-table.txt"
    # The tiny model in bf16 and fp8 (16-bit GEMMs, so the search applies; the tiny preset's default
    # fp32 is not searched), search / cublas / search: an order effect on this launch-bound model
    # shows as the two search runs disagreeing.
    TINY=(--model tiny --device cuda --seq-len 256 --micro-batch 4 --steps 12 --warmup 2 --kernel-sample-every 0
          --compile fused)
    for amp in bf16 fp8; do
      TUNEBENCH_GEMM_LOG=1 run "tiny-$amp-search" "${TINY[@]}" --amp "$amp"
      TUNEBENCH_GEMM=cublas run "tiny-$amp-cublas" "${TINY[@]}" --amp "$amp"
      run "tiny-$amp-search-again" "${TINY[@]}" --amp "$amp"
    done
    print_losses "$OUT"/logs/tiny-*.jsonl >> "$OUT/models-table.txt"
    GS=(--device cuda --seq-len 2048 --micro-batch 1 --steps "${GS_STEPS:-11}" --warmup 3 --compile fused
        --kernel-sample-every 0)
    run_variant() { local g="$1"; shift; TUNEBENCH_GEMM=$g TUNEBENCH_GEMM_LOG=1 run "$@"; }
    interleaved_rows "${GS_ROWS:-7b/bf16 llama3.2-1b/bf16 llama3.2-1b/fp8}" search cublas "${GS[@]}"
    grep -h "GEMM algorithms" "$OUT"/logs/*-search-1.jsonl | cut -c1-400 >> "$OUT/models-table.txt"
    python3 "$ROOT/lab/models_check_table.py" "$OUT/logs" >> "$OUT/models-table.txt"
    ;;
  ab)
    # This tree against another commit (AB_AGAINST, a `git archive` tarball), in one call: a change
    # that should leave the numbers alone shows the same losses to the bit, and its time is measured
    # against the other worker's on the same GPU, interleaved, instead of against another call's.
    [ -f "${AB_AGAINST:-}" ] || { echo "ab: AB_AGAINST=TARBALL (git archive of the other commit) is required" >&2; exit 2; }
    W_THIS="$W"; W_AGAINST="$(build_against "$AB_AGAINST")"
    [ -x "$W_AGAINST" ] || { echo "ab: the other commit's worker did not build" >&2; exit 1; }
    echo "built the other worker at $(( $(date +%s) - t0 )) s"
    export TUNEBENCH_MEMORY_PHASES=1
    if [ "${AB_ROWS_ONLY:-0}" != 1 ]; then
    "$BUILD/tests/gpu/tunebench-kernel-check" > "$OUT/kernel-check.txt" 2>&1
    echo "-- kernel check: exit $?"
    { echo "== kernel check: $(grep -c ' ok$' "$OUT/kernel-check.txt") rows ok, $(grep -c 'FAIL' "$OUT/kernel-check.txt") FAIL"
      grep -E "${AB_CHECK:-FAIL}" "$OUT/kernel-check.txt"; } > "$OUT/models-table.txt"
    TINY=(--model tiny --device cuda --seq-len 256 --micro-batch 4 --steps 12 --warmup 2 --kernel-sample-every 0)
    for amp in bf16 fp8; do
      for path in fused graph ckpt accum ${AB_PATHS_EXTRA:-}; do
        case "$path" in
          graph) extra=(--compile fused+graph) ;;
          tied) extra=(--compile fused --grad-accum 2 --model custom --layers 4 --dim 256 --heads 4 --ffn 688
                       --vocab 32000 --tie-embeddings true) ;;  # the tiny preset's shape, tied
          ckpt) extra=(--compile fused --checkpointing true) ;;
          accum) extra=(--compile fused --grad-accum 2) ;;
          fused) extra=(--compile fused) ;;
        esac
        W="$W_THIS"; run "tiny-$amp-$path-this" "${TINY[@]}" --amp "$amp" "${extra[@]}"
        W="$W_AGAINST"; run "tiny-$amp-$path-against" "${TINY[@]}" --amp "$amp" "${extra[@]}"
      done
    done
    W="$W_THIS"
    # Every loss of each pair, as the event log holds it (JSON's shortest round-trip form).
    python3 - "$OUT/logs" "${AB_SAME_LOSSES:-1}" >> "$OUT/models-table.txt" <<'PY'
import glob, json, os, sys
logs, want_same = sys.argv[1], sys.argv[2] == "1"
def losses(f):
    return [e["loss"] for e in map(json.loads, open(f)) if e.get("type") == "step"]
bad = 0
for this in sorted(glob.glob(os.path.join(logs, "tiny-*-this.jsonl"))):
    other = this.replace("-this.jsonl", "-against.jsonl")
    a, b = losses(this), losses(other) if os.path.exists(other) else []
    same = len(a) == 12 and a == b
    bad += want_same and not same
    print("%-24s %s  %s" % (os.path.basename(this)[:-11], "same losses" if same else "LOSSES DIFFER",
                             " ".join("%.6f" % x for x in a)))
print("tiny losses: %s" % ("all pairs the same" if not bad else "%d pairs DIFFER" % bad))
PY
    fi
    AB=(--device cuda --seq-len 2048 --micro-batch 1 --steps "${AB_STEPS:-11}" --warmup 3 --compile fused
        --kernel-sample-every 0)
    run_variant() {
      if [ "$1" = this ]; then W="$W_THIS"; else W="$W_AGAINST"; fi
      shift; run "$@"
    }
    interleaved_rows "${AB_ROWS:-7b/bf16 llama3.2-1b/bf16 llama3.2-1b/fp8}" this against "${AB[@]}"
    W="$W_THIS"
    python3 "$ROOT/lab/models_check_table.py" "$OUT/logs" >> "$OUT/models-table.txt"
    ;;
  hardware)
    # Issue 41: memory by category at sampled steps and at an out-of-memory, energy, GPM activity.
    mkdir -p "$OUT/snapshots"
    HW=(--device cuda --seq-len 2048 --amp bf16 --warmup 3 --kernel-sample-every 10 --kernel-sample-steps 1)
    for r in "7b|1|24" "llama3.2-1b|4|24"; do
      IFS='|' read -r m mb n <<< "$r"
      TUNEBENCH_MEMORY_SNAPSHOT="$OUT/snapshots/hw-$m-single.json" \
        run "hw-$m-single" --model "$m" --micro-batch "$mb" --steps "$n" "${HW[@]}"
    done
    # Out of memory on purpose: 7B without checkpointing at micro-batch 24 (its activations alone are
    # several times the card); the worker records the allocator's state before it exits.
    TUNEBENCH_MEMORY_SNAPSHOT="$OUT/snapshots/hw-7b-oom.json" \
      run hw-7b-oom --model 7b --micro-batch 24 --steps 4 "${HW[@]}"
    # The same out of memory where it fits any card's model: Llama-3.2-1B at micro-batch 64 (its
    # activations alone are about 160 GiB).
    TUNEBENCH_MEMORY_SNAPSHOT="$OUT/snapshots/hw-1b-oom.json" \
      run hw-1b-oom --model llama3.2-1b --micro-batch 64 --steps 4 "${HW[@]}" --compile fused
    # Energy per token: two micro-batches, and fp8 against bf16, of one GQA model. The bf16 rows
    # keep their snapshots (memory by category of `compile fused`).
    for r in "mb2|2|bf16" "mb8|8|bf16" "mb8-fp8|8|fp8"; do
      IFS='|' read -r tag mb amp <<< "$r"
      TUNEBENCH_MEMORY_SNAPSHOT="$OUT/snapshots/hw-1b-$tag.json" \
        run "hw-1b-$tag" --model llama3.2-1b --micro-batch "$mb" --steps 60 "${HW[@]}" --amp "$amp" --compile fused
    done
    # What memory sampling costs the steps it does not sample: micro-batch 2 without any sampling,
    # twice, interleaved with a second sampled run (lab/hardware_table.py compares the medians).
    for k in 1 2; do
      run "hw-1b-mb2-unsampled-$k" --model llama3.2-1b --micro-batch 2 --steps 60 "${HW[@]}" --compile fused \
        --kernel-sample-every 0
      [ "$k" = 1 ] && run "hw-1b-mb2-again" --model llama3.2-1b --micro-batch 2 --steps 60 "${HW[@]}" --compile fused
    done
    ls -la "$OUT/snapshots"
    python3 "$ROOT/lab/hardware_table.py" "$OUT/logs" "$OUT/snapshots" > "$OUT/models-table.txt"
    if [ -f "$ROOT/.gpu/cli.tar.xz" ]; then
      tar -xJf "$ROOT/.gpu/cli.tar.xz" -C /tmp
      S="$OUT/hardware.tbsession"
      for f in "$OUT"/logs/hw-*.jsonl; do /tmp/clibundle/run-cli.sh import "$S" "$f" > /dev/null 2>&1; done
      { echo; echo "== tunebench-cli report (the product's figures)"
        /tmp/clibundle/run-cli.sh report "$S" --format markdown 2>&1; } >> "$OUT/models-table.txt"
    else
      echo "-- no .gpu/cli.tar.xz: the CLI's report of these logs is left out" >> "$OUT/models-table.txt"
    fi
    ;;
  *) echo "unknown mode $MODE" >&2; exit 2 ;;
esac

echo "== table"
python3 "$ROOT/lab/gpu_table.py" "$RESULTS" | tee "$OUT/table.txt"
if [ "$MODE" = idle ]; then
  echo "== idle"; python3 "$ROOT/lab/idle_table.py" "$OUT/logs" "$OUT/traces" | tee "$OUT/idle-table.txt"
  rm -rf "$OUT/traces"
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
if [ "$MODE" = investigate ] && [ -f "$OUT/investigate/summary.txt" ]; then
  echo "== investigate"; cat "$OUT/investigate/summary.txt"
fi
if [ -f "$OUT/models-table.txt" ]; then
  echo "== models"; cat "$OUT/models-table.txt"
fi
if [ -f "$OUT/overlap-table.txt" ]; then
  echo "== optimizer overlap"; cat "$OUT/overlap-table.txt"
fi
if [ -f "$OUT/grads-table.txt" ]; then
  echo "== weight gradient dtype"; cat "$OUT/grads-table.txt"
fi
