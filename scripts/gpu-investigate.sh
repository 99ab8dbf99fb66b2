#!/usr/bin/env bash
# Issue 12 on the GPU machine (called by `scripts/gpu-bench.sh investigate`, about 3 minutes of 2 x
# H200): the packed CLI (.gpu/cli.tar.xz from scripts/cli-bundle.sh) drives the CUDA worker.
#   (a) 125m DDP x2 autotune with a small budget, and the exhaustive grid of the same 8-point space:
#       trial time (s) and best tokens/s per GPU of each;
#   (b) investigate a 125m DDP baseline with NCCL_P2P_DISABLE=1, and a data-bound 125m single-GPU
#       baseline (num_workers 0, 3 ms of CPU work per sample).
# Usage: scripts/gpu-investigate.sh WORKER OUTDIR. Writes sessions, JSON and logs under OUTDIR and
# OUTDIR/summary.txt (gpu-bench.sh prints it last).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
W="$1"; D="$2"
mkdir -p "$D"
tar -xJf "$ROOT/.gpu/cli.tar.xz" -C /tmp || { echo "no .gpu/cli.tar.xz: run scripts/gpu-bench.sh prepare first"; exit 1; }
CLI=/tmp/clibundle/run-cli.sh
S125=(--set device=cuda --set seq_len=1024 --set amp=bf16)
SPACE=(--axis micro_batch=8,16 --axis compile=off,fused --axis zero=ddp,zero2)
t0=$(date +%s)

# (a) the search (a 60 s budget of trial time) and the exhaustive grid, each in its own session;
# each command's wall time (start-up of every trial included) goes to NAME.wall.
t=$(date +%s)
"$CLI" tune "$D/tune.tbsession" --preset 125m-single "${S125[@]}" --set strategy=ddp --set world_size=2 --per-gpu \
  "${SPACE[@]}" --short-steps 6 --long-steps 14 --warmup 3 --finalists 2 --budget-minutes 1 --gpu h200 \
  --worker "$W" --timeout 120 --json --out "$D/best.json" > "$D/tune.json" 2> "$D/tune.log"
echo "-- tune: exit $? at $(( $(date +%s) - t0 )) s"; echo $(( $(date +%s) - t )) > "$D/tune.wall"
t=$(date +%s)
"$CLI" tune "$D/grid.tbsession" --preset 125m-single "${S125[@]}" --set strategy=ddp --set world_size=2 --per-gpu \
  "${SPACE[@]}" --long-steps 14 --warmup 3 --exhaustive --gpu h200 \
  --worker "$W" --timeout 120 --json > "$D/grid.json" 2> "$D/grid.log"
echo "-- grid: exit $? at $(( $(date +%s) - t0 )) s"; echo $(( $(date +%s) - t )) > "$D/grid.wall"

# (b) baselines run by the worker, imported, then investigated within a budget of trials.
base() {  # NAME SESSION [worker flags...]
  local name="$1" session="$2"; shift 2
  local world=1 args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "--world-size" ] && world="${args[$((i + 1))]}"; done
  if [ "$world" -gt 1 ]; then
    torchrun --standalone --nproc-per-node "$world" --no-python "$W" --events "file:$D/$name.jsonl" "$@" > "$D/$name.stderr" 2>&1
  else
    "$W" --events "file:$D/$name.jsonl" "$@" > "$D/$name.stderr" 2>&1
  fi
  "$CLI" import "$session" "$D/$name.jsonl" --name "$name" > /dev/null
}
B=(--model 125m --device cuda --seq-len 1024 --micro-batch 8 --amp bf16 --steps 14 --warmup 3)
base ddp-nop2p "$D/ddp-nop2p.tbsession" "${B[@]}" --strategy ddp --world-size 2 --nccl-env NCCL_P2P_DISABLE=1
"$CLI" investigate "$D/ddp-nop2p.tbsession" 1 --budget 5 --max-repeats 1 --worker "$W" --timeout 120 --json \
  > "$D/ddp-nop2p.json" 2> "$D/ddp-nop2p.log"
echo "-- investigate ddp-nop2p: exit $? at $(( $(date +%s) - t0 )) s"
base data-bound "$D/data-bound.tbsession" "${B[@]}" --num-workers 0 --sample-cpu-us 3000
"$CLI" investigate "$D/data-bound.tbsession" 1 --budget 4 --max-repeats 1 --worker "$W" --timeout 120 --json \
  > "$D/data-bound.json" 2> "$D/data-bound.log"
echo "-- investigate data-bound: exit $? at $(( $(date +%s) - t0 )) s"

python3 - "$D" > "$D/summary.txt" <<'PY'
import json, sys, os
d = sys.argv[1]
def load(n):
    try: return json.load(open(os.path.join(d, n)))
    except Exception as e: return {"error": str(e)}
t, g = load("tune.json"), load("grid.json")
print("autotune, 125m DDP x2, objective tokens/s per GPU, same 8-point space")
def wall(n):
    try: return float(open(os.path.join(d, n + ".wall")).read())
    except Exception: return 0.0
print(f"{'run':<12}{'trials':>7}{'trial time s':>14}{'wall s':>8}{'best tok/s/GPU':>16}  best point")
for name, r, w in (("search", t, wall("tune")), ("exhaustive", g, wall("grid"))):
    b = r.get("best", {})
    print(f"{name:<12}{len(r.get('trials', [])):>7}{r.get('cost_s', 0):>14.1f}{w:>8.0f}{b.get('objective', 0):>16.0f}  {b.get('point', r.get('error', '-'))}")
if t.get("best") and g.get("best"):
    print(f"search/grid: best {t['best']['objective'] / g['best']['objective']:.3f}, trial time {t['cost_s'] / max(g['cost_s'], 1e-9):.3f}, wall {wall('tune') / max(wall('grid'), 1e-9):.3f}")
for n in ("ddp-nop2p", "data-bound"):
    r = load(n + ".json")
    print(f"\ninvestigate {n}: baseline {r.get('baseline', {}).get('step_ms', 0):.1f} ms/step, noise {100 * r.get('noise_floor', 0):.1f} %")
    for i, f in enumerate(r.get("factors", [])[:6]):
        eff = "failed" if f["failed"] else f"{100 * f['effect']:+.1f} % [{100 * f['effect_low']:+.1f}, {100 * f['effect_high']:+.1f}]"
        print(f"  {i + 1}. {f['title']:<30} {f['category']:<14} {eff:<28} {'beyond' if f['beyond_noise'] else 'within'} noise  {f['phase_moved']}")
    print("  " + r.get("verdict", r.get("error", ""))[:600])
PY
echo "== investigate outputs in $D ($(( $(date +%s) - t0 )) s)"
