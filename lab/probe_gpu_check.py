"""tunebench_probe on a GPU (scripts/gpu-bench.sh script): what the probe costs a user's script, and
a recorded run of each kind for the phase check and the window's replay.

Reads nothing; writes into OUT (argument 1): overhead.json and overhead.txt (the table, printed
last), and for one probed run of each shape its events (`<shape>.jsonl`) and, for the small shape,
a torch.profiler trace of the same steps (`small-trace.json.gz`), which lab/probe_phase_check.py
compares with the probe's phases. No worker and no build: the probe is pure Python.

The user's script is written here (a LLaMA-like decoder in plain PyTorch, bf16 autocast, AdamW, a
DataLoader of random tokens) and times itself: CUDA events around its measured steps, one
synchronisation at the end, printed as JSON. So the same number is read with and without the
probe. Runs are interleaved, plain then probed, ROUNDS times, in the order that alternates.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

SCRIPT = r'''
import argparse, contextlib, json, math, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

p = argparse.ArgumentParser()
p.add_argument("--dim", type=int); p.add_argument("--layers", type=int); p.add_argument("--heads", type=int)
p.add_argument("--seq", type=int); p.add_argument("--batch", type=int); p.add_argument("--steps", type=int)
p.add_argument("--warmup", type=int, default=5); p.add_argument("--profile", default="")
p.add_argument("--ddp", action="store_true", help="as PyTorch's DDP tutorial: NCCL process group, DDP, DistributedSampler")
a = p.parse_args()
torch.manual_seed(0)
dev = "cuda"
if a.ddp:
    import os, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data.distributed import DistributedSampler
    dist.init_process_group("nccl")
    dev = f"cuda:{int(os.environ['LOCAL_RANK'])}"
    torch.cuda.set_device(dev)

class Block(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.h = h; s.n1 = nn.LayerNorm(d); s.qkv = nn.Linear(d, 3 * d, bias=False)
        s.o = nn.Linear(d, d, bias=False); s.n2 = nn.LayerNorm(d)
        s.up = nn.Linear(d, 4 * d, bias=False); s.down = nn.Linear(4 * d, d, bias=False)
    def forward(s, x):
        B, T, D = x.shape
        q, k, v = s.qkv(s.n1(x)).view(B, T, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
        x = x + s.o(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D))
        return x + s.down(F.gelu(s.up(s.n2(x))))

class LM(nn.Module):
    def __init__(s):
        super().__init__(); s.emb = nn.Embedding(32000, a.dim)
        s.blocks = nn.ModuleList(Block(a.dim, a.heads) for _ in range(a.layers)); s.head = nn.Linear(a.dim, 32000, bias=False)
    def forward(s, t):
        x = s.emb(t)
        for b in s.blocks: x = b(x)
        return s.head(x)

class Tokens(Dataset):
    def __len__(s): return 10**6
    def __getitem__(s, i): return torch.randint(0, 32000, (a.seq + 1,))

model = LM().to(dev)
sampler = None
if a.ddp:
    model = DDP(model, device_ids=[torch.cuda.current_device()])
    sampler = DistributedSampler(Tokens())
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = DataLoader(Tokens(), batch_size=a.batch, num_workers=2, pin_memory=True, sampler=sampler)
prof = None
if a.profile:
    from torch.profiler import profile, ProfilerActivity, schedule
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   schedule=schedule(wait=a.warmup, warmup=1, active=3, repeat=1))
    prof.start()
start = end = None
for step, batch in enumerate(loader):
    if step == a.steps: break
    if step == a.warmup:
        start = torch.cuda.Event(enable_timing=True); start.record()
    batch = batch.to(dev, non_blocking=True)
    # Under --profile each phase is a record_function, so the trace says which kernels are whose.
    mark = torch.profiler.record_function if prof else (lambda name: contextlib.nullcontext())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        with mark("phase:forward"):  # the model's call: the probe's forward (the loss is a function)
            logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1).float(), batch[:, 1:].flatten())
    with mark("phase:backward"):
        loss.backward()
    with mark("phase:optimizer"):
        opt.step()
    opt.zero_grad(set_to_none=True)
    if prof: prof.step()
end = torch.cuda.Event(enable_timing=True); end.record(); torch.cuda.synchronize()
if prof:
    prof.stop(); prof.export_chrome_trace(a.profile)
print("SELF " + json.dumps({"ms_per_step": start.elapsed_time(end) / (a.steps - a.warmup)}), flush=True)
if a.ddp:
    dist.destroy_process_group()
'''

SHAPES = {
    # A GPU-bound step (about 100 ms on an H100): the probe's per-step work is far below 1 %.
    "large": ["--dim", "2048", "--layers", "12", "--heads", "16", "--seq", "2048", "--batch", "4", "--steps", "40"],
    # About 5 ms: the probe's Python per step weighs most here.
    "small": ["--dim", "512", "--layers", "4", "--heads", "8", "--seq", "512", "--batch", "4", "--steps", "200"],
    # PyTorch's DDP tutorial's shape of script (one rank, NCCL): its phases against torch.profiler.
    "ddp": ["--dim", "1024", "--layers", "8", "--heads", "16", "--seq", "1024", "--batch", "4", "--steps", "60",
            "--ddp"],
    # scripts/pytorch_reference.py (a 4-layer Llama-3.2-1B, bf16 autocast, fused AdamW), run through
    # lab/reference_profiled.py, which adds the phase marks of its profiled run from outside.
    "reference": ["--model", "llama3.2-1b", "--layers", "4", "--seq", "1024", "--batch", "4", "--steps", "30",
                  "--warmup", "3"],
}
OWN_SCRIPT = {"reference": os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_profiled.py")}
PROFILED = ("small", "ddp", "reference")  # the shapes whose recorded run is also under torch.profiler
if os.environ.get("SHAPES"):  # SHAPES=small: these shapes only (here and in lab/probe_sample_check.py)
    SHAPES = {name: SHAPES[name] for name in os.environ["SHAPES"].split(",")}


def run(script, shape, probed, out, events=None, extra=(), without=None):
    script = OWN_SCRIPT.get(shape, script)
    args = SHAPES[shape] + list(extra)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if "--ddp" in args:  # one rank, as torchrun would start it
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
    if probed:
        config = os.path.join(out, f"config-{shape}.json")
        # More steps than the script runs: it ends by itself, and prints its own timing.
        with open(config, "w") as f:
            # No kernel sampling: this measures the probe on the steps it does not sample (the
            # script's own --profile would also clash with it); lab/probe_sample_check.py measures
            # sampling.
            json.dump({"steps": 100000, "warmup": 5, "gpu_sample_hz": 10, "step_timeout_s": 300,
                       "kernel_sample_every": 0}, f)
        probe = ([os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe_without.py"), without] if without
                 else ["-m", "tunebench_probe"])
        cmd = [sys.executable] + probe + ["--config", config, "--events",
                                          f"file:{events}" if events else "none", "--", script] + args
    else:
        cmd = [sys.executable, script] + args
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("SELF "):
            return json.loads(line[5:])["ms_per_step"]
        if line.startswith("RESULT "):  # scripts/pytorch_reference.py's own step time
            return json.loads(line[7:])["step_ms"]
    raise RuntimeError(f"{shape} {'probed' if probed else 'plain'}: exit {p.returncode}\n{p.stderr[-3000:]}")


def write_live_config(script_path, config_path):
    """`--write-script PATH --config PATH`: the script and a trial config of the window's live run
    (scripts/gpu-bench.sh script): the large shape, long enough to be running at the screenshot."""
    os.makedirs(os.path.dirname(os.path.abspath(script_path)), exist_ok=True)
    with open(script_path, "w") as f:
        f.write(SCRIPT)
    large = ["--dim", "2048", "--layers", "12", "--heads", "16", "--seq", "2048", "--batch", "4", "--steps", "100000"]
    with open(config_path, "w") as f:
        json.dump({"name": "train_lm.py (live)", "script": os.path.abspath(script_path),
                   "script_args": " ".join(large), "python": sys.executable, "world_size": 1, "steps": 400,
                   "warmup": 5, "kernel_sample_every": 20, "kernel_sample_steps": 2, "gpu_sample_hz": 10}, f)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--write-script":
        return write_live_config(sys.argv[2], sys.argv[4])
    out = sys.argv[1]
    rounds = int(os.environ.get("ROUNDS", "3"))
    work = tempfile.mkdtemp()
    script = os.path.join(work, "train_lm.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    # WITHOUT=PART,...: also the probe without (or with another) part (lab/probe_without.py), in the
    # same rounds, for the shapes it applies to (ddp_*: the DDP shape).
    parts = [p for p in os.environ.get("WITHOUT", "").split(",") if p]
    results = {shape: {"plain": [], "probed": []} for shape in SHAPES}
    for shape in SHAPES:
        for part in parts:
            if not part.startswith("ddp_") or "--ddp" in SHAPES[shape]:
                results[shape]["without " + part] = []
    for r in range(rounds):
        for shape in SHAPES:
            order = list(results[shape])
            for kind in order if r % 2 == 0 else reversed(order):
                part = kind[len("without "):] if kind.startswith("without ") else None
                results[shape][kind].append(run(script, shape, kind != "plain", out, without=part))
    # Recorded runs (events to a file; the PROFILED ones also under torch.profiler) for the phase check.
    for shape in SHAPES:
        extra = ["--profile", os.path.join(out, f"{shape}-trace.json")] if shape in PROFILED else []
        run(script, shape, True, out, events=os.path.join(out, f"{shape}.jsonl"), extra=extra)
        if os.path.exists(os.path.join(out, f"{shape}-trace.json")):
            subprocess.run(["gzip", "-9", os.path.join(out, f"{shape}-trace.json")], check=True)
    if os.environ.get("PROFILE_PROBE"):  # where a probed step's time goes: cProfile of one small run
        shape = "small" if "small" in SHAPES else next(iter(SHAPES))
        config = os.path.join(out, f"config-{shape}.json")
        prof = os.path.join(out, "probe.prof")
        subprocess.run([sys.executable, "-m", "cProfile", "-o", prof, "-m", "tunebench_probe", "--config", config,
                        "--events", "none", "--", script] + SHAPES[shape], capture_output=True, timeout=300)
        import pstats
        pstats.Stats(prof, stream=open(os.path.join(out, "probe-profile.txt"), "w")).sort_stats("tottime").print_stats(40)
    json.dump(results, open(os.path.join(out, "overhead.json"), "w"), indent=1)
    lines = ["shape   plain ms/step (rounds)              probed ms/step (rounds)             ratio of medians"]
    fmt = lambda v: " ".join(f"{x:.3f}" for x in v)
    for shape, r in results.items():
        if not r["plain"]:
            continue
        plain, probed = statistics.median(r["plain"]), statistics.median(r["probed"])
        lines.append(f"{shape:6}  {plain:8.3f} ({fmt(r['plain'])})  {probed:8.3f} ({fmt(r['probed'])})  {probed / plain:.4f}")
        for kind, v in r.items():
            if kind.startswith("without ") and v:
                w = statistics.median(v)
                lines.append(f"{shape:6}  {kind}: {w:8.3f} ({fmt(v)})  {w / plain:.4f} of plain")
    text = "\n".join(lines)
    open(os.path.join(out, "overhead.txt"), "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
