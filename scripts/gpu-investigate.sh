#!/usr/bin/env bash
# Issue 12 on the GPU machine (called by `scripts/gpu-bench.sh investigate`, about 6 minutes of 2 x
# H200): the packed CLI (.gpu/cli.tar.xz, made by `scripts/gpu-bench.sh prepare` with
# `scripts/bundle.sh cli`) drives the CUDA worker.
#   (a) 125m DDP x2 autotune of a 24-point space with a budget of a third of the grid's trial time
#       (30 s), and the exhaustive grid of the same space: trial time and best tokens/s per GPU;
#   (b) investigate a 1B DDP baseline with NCCL_P2P_DISABLE=1 (communication-bound: 235 ms/step
#       against 124 over NVLink), and (PARTS=databound) a data-bound 125m single-GPU baseline.
# Usage: scripts/gpu-investigate.sh WORKER OUTDIR. PARTS (default "tune grid nop2p") picks the parts.
# Writes sessions, JSON and logs under OUTDIR and OUTDIR/summary.txt (gpu-bench.sh prints it last).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
W="$1"; D="$2"
mkdir -p "$D"
tar -xJf "$ROOT/.gpu/cli.tar.xz" -C /tmp || { echo "no .gpu/cli.tar.xz: run scripts/gpu-bench.sh prepare first"; exit 1; }
CLI=/tmp/clibundle/run-cli.sh
PARTS="${PARTS:-tune grid nop2p}"
S125=(--set device=cuda --set seq_len=1024 --set amp=bf16)
SPACE=(--axis micro_batch=4,8,16 --axis compile=off,fused --axis zero=ddp,zero2 --axis bucket_mb=25,100)
TUNE=(--preset 125m-single "${S125[@]}" --set strategy=ddp --set world_size=2 --per-gpu "${SPACE[@]}" --warmup 3 --gpu h200
      --worker "$W" --timeout 120 --json)
t0=$(date +%s)
has() { [[ " $PARTS " == *" $1 "* ]]; }

# (a) the search (30 s of trial time: a third of the grid's 91 s on 2026-11-30) and the exhaustive
# grid, each in its own session; each command's wall time (start-up of every trial included) goes
# to NAME.wall. The search's predicted order is printed first (--dry-run).
if has tune; then
  "$CLI" tune "$D/tune.tbsession" "${TUNE[@]}" --short-steps 6 --long-steps 14 --finalists 2 --dry-run > "$D/tune.order" 2>&1
  t=$(date +%s)
  "$CLI" tune "$D/tune.tbsession" "${TUNE[@]}" --short-steps 6 --long-steps 14 --finalists 2 --budget-minutes 0.5 \
    --out "$D/best.json" > "$D/tune.json" 2> "$D/tune.log"
  echo "-- tune: exit $? at $(( $(date +%s) - t0 )) s"; echo $(( $(date +%s) - t )) > "$D/tune.wall"
fi
if has grid; then
  t=$(date +%s)
  "$CLI" tune "$D/grid.tbsession" "${TUNE[@]}" --long-steps 14 --exhaustive > "$D/grid.json" 2> "$D/grid.log"
  echo "-- grid: exit $? at $(( $(date +%s) - t0 )) s"; echo $(( $(date +%s) - t )) > "$D/grid.wall"
fi

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
INVESTIGATED=()
if has nop2p; then
  B1=(--model 1b --device cuda --seq-len 2048 --micro-batch 2 --amp bf16 --steps 14 --warmup 3)
  base ddp-1b-nop2p "$D/ddp-1b-nop2p.tbsession" "${B1[@]}" --strategy ddp --world-size 2 --nccl-env NCCL_P2P_DISABLE=1
  "$CLI" investigate "$D/ddp-1b-nop2p.tbsession" 1 --budget 5 --max-repeats 1 --worker "$W" --timeout 180 --json \
    > "$D/ddp-1b-nop2p.json" 2> "$D/ddp-1b-nop2p.log"
  echo "-- investigate ddp-1b-nop2p: exit $? at $(( $(date +%s) - t0 )) s"
  INVESTIGATED+=(ddp-1b-nop2p)
fi
if has databound; then
  B=(--model 125m --device cuda --seq-len 1024 --micro-batch 8 --amp bf16 --steps 14 --warmup 3)
  base data-bound "$D/data-bound.tbsession" "${B[@]}" --num-workers 0 --sample-cpu-us 3000
  "$CLI" investigate "$D/data-bound.tbsession" 1 --budget 4 --max-repeats 1 --worker "$W" --timeout 120 --json \
    > "$D/data-bound.json" 2> "$D/data-bound.log"
  echo "-- investigate data-bound: exit $? at $(( $(date +%s) - t0 )) s"
  INVESTIGATED+=(data-bound)
fi

python3 - "$D" "${INVESTIGATED[@]}" > "$D/summary.txt" <<'PY'
import json, sys, os
d = sys.argv[1]
try: print("".join(open(os.path.join(d, "tune.order")).readlines()[:8]))
except Exception: pass
def load(n):
    try: return json.load(open(os.path.join(d, n)))
    except Exception as e: return {"error": str(e)}
t, g = load("tune.json"), load("grid.json")
print("autotune, 125m DDP x2, objective tokens/s per GPU, same 24-point space")
def wall(n):
    try: return float(open(os.path.join(d, n + ".wall")).read())
    except Exception: return 0.0
print(f"{'run':<12}{'trials':>7}{'trial time s':>14}{'wall s':>8}{'best tok/s/GPU':>16}  best point")
for name, r, w in (("search", t, wall("tune")), ("exhaustive", g, wall("grid"))):
    b = r.get("best", {})
    print(f"{name:<12}{len(r.get('trials', [])):>7}{r.get('cost_s', 0):>14.1f}{w:>8.0f}{b.get('objective', 0):>16.0f}  {b.get('point', r.get('error', '-'))}")
if t.get("best") and g.get("best"):
    print(f"search/grid: best {t['best']['objective'] / g['best']['objective']:.3f}, trial time {t['cost_s'] / max(g['cost_s'], 1e-9):.3f}, wall {wall('tune') / max(wall('grid'), 1e-9):.3f}")
for n in sys.argv[2:]:
    r = load(n + ".json")
    print(f"\ninvestigate {n}: baseline {r.get('baseline', {}).get('step_ms', 0):.1f} ms/step, noise {100 * r.get('noise_floor', 0):.1f} %")
    for i, f in enumerate(r.get("factors", [])[:6]):
        eff = "failed" if f["failed"] else f"{100 * f['effect']:+.1f} % [{100 * f['effect_low']:+.1f}, {100 * f['effect_high']:+.1f}]"
        print(f"  {i + 1}. {f['title']:<30} {f['category']:<14} {eff:<28} {'beyond' if f['beyond_noise'] else 'within'} noise  {f['phase_moved']}")
    print("  " + r.get("verdict", r.get("error", ""))[:600])
PY
echo "== investigate outputs in $D ($(( $(date +%s) - t0 )) s)"
