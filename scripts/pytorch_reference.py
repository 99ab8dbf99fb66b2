#!/usr/bin/env python3
"""The PyTorch reference of tunebench-worker: the worker's LLaMA-style network written in plain
PyTorch, trained on random tokens, timed the way the worker times itself. docs/BENCHMARKS.md puts
the worker's figures beside this script's, measured in the same call of scripts/gpu-bench.sh.

    python3 scripts/pytorch_reference.py --model 7b --seq 2048 --batch 1 [--compile] [--ckpt]
    torchrun --standalone --nproc-per-node 2 scripts/pytorch_reference.py --model 7b --mode ddp --ckpt
    torchrun --standalone --nproc-per-node 2 scripts/pytorch_reference.py --model 7b --mode fsdp
    python3 scripts/pytorch_reference.py --model 125m --dim 1024 --kv-heads 4 ...   # dims over a preset
    python3 scripts/pytorch_reference.py --list-presets [--json]   # dims and parameter counts, no torch
    python3 scripts/pytorch_reference.py --probe gemm               # bf16 GEMMs of a preset's shapes
    torchrun --standalone --nproc-per-node 2 scripts/pytorch_reference.py --probe allreduce

Each run prints one line `RESULT {json}` on rank 0: median / min / max step time over the measured
steps (warm-up excluded), tokens/s per GPU, MFU, peak allocated GiB (largest over the ranks),
parameter count and every setting that shaped the run.

The network, line for line the worker's (core/engine/model/llama.cpp, composite path):
- token embedding; L blocks; final RMSNorm; output head (sharing the embedding with --tie);
- block: h = x + wo(attn(rope(q), rope(k), v)) with q, k, v from one wqkv matmul of rmsnorm(x);
  out = h + w2(silu(g) * u) with g, u the two halves of one w13 matmul of rmsnorm(h);
- RMSNorm: w * (xf * rsqrt(mean(xf^2) + 1e-5)).to(x.dtype) with xf = x in fp32;
- rotary embedding on interleaved pairs (x[2i], x[2i+1]), angles t * theta^(-2i/hd) in fp32,
  the result cast back to the input's dtype;
- causal scaled-dot-product attention; grouped-query when kv_heads < heads (k/v shared by
  heads / kv_heads query heads);
- loss: cross-entropy of the fp32 logits; parameters initialised N(0, 0.02), norms to 1;
  fused AdamW (lr 1e-4, betas 0.9/0.999, eps 1e-8, weight decay 0).
Precisions as the worker's `amp`: fp32 (no TF32), tf32, bf16 and fp16 autocast (fp16 with a
loss scaler), pure-bf16 (bf16 parameters and optimizer). FSDP casts parameters to bf16 and
reduces in fp32 (FSDP2's MixedPrecisionPolicy) instead of autocasting, as the worker's FSDP does.
fp8 is the worker's own kernels; PyTorch has no built-in counterpart, so it is refused here.

torch is imported only for a run or a probe: --list-presets works on a machine without it.
"""
import argparse
import json
import os
import statistics
import sys
import time

# ---- presets: shapes only (random weights) ------------------------------------------------------
# Keys as the worker's config (core/config): dim, layers, heads, kv_heads, ffn, vocab,
# tie_embeddings, rope_theta. The public architectures take the published Hugging Face config's
# dims; what the worker does not model is left out and named in `left_out`.
DEFAULTS = dict(kv_heads=None, tie_embeddings=False, rope_theta=10000.0)

PRESETS = {
    "tiny": dict(dim=256, layers=4, heads=4, ffn=688, vocab=32000,
                 source="the worker's CPU smoke-test size"),
    "125m": dict(dim=768, layers=12, heads=12, ffn=2048, vocab=32000,
                 source="GPT-2-small widths with the LLaMA block"),
    "1b": dict(dim=2048, layers=22, heads=16, ffn=5632, vocab=32000,
               source="TinyLlama-1.1B widths, multi-head attention"),
    "7b": dict(dim=4096, layers=32, heads=32, ffn=11008, vocab=32000,
               source="meta-llama/Llama-2-7b-hf"),
    "llama3.1-8b": dict(dim=4096, layers=32, heads=32, kv_heads=8, ffn=14336, vocab=128256, rope_theta=500000.0,
                        source="meta-llama/Llama-3.1-8B", left_out=["rope_scaling (llama3, factor 8)"]),
    "mistral-7b": dict(dim=4096, layers=32, heads=32, kv_heads=8, ffn=14336, vocab=32768, rope_theta=1000000.0,
                       source="mistralai/Mistral-7B-v0.3"),
    "qwen2.5-7b": dict(dim=3584, layers=28, heads=28, kv_heads=4, ffn=18944, vocab=152064, rope_theta=1000000.0,
                       source="Qwen/Qwen2.5-7B", left_out=["q/k/v biases"]),
    "phi3-mini": dict(dim=3072, layers=32, heads=32, ffn=8192, vocab=32064,  # head_dim 96
                      source="microsoft/Phi-3-mini-4k-instruct", left_out=["sliding_window 2047"]),
    "llama3.2-1b": dict(dim=2048, layers=16, heads=32, kv_heads=8, ffn=8192, vocab=128256, tie_embeddings=True,
                        rope_theta=500000.0,  # head_dim 64
                        source="meta-llama/Llama-3.2-1B", left_out=["rope_scaling (llama3, factor 32)"]),
}

DIM_KEYS = ("dim", "layers", "heads", "kv_heads", "ffn", "vocab", "tie_embeddings", "rope_theta")
PEAK_TFLOPS = 989.0  # dense bf16 of an H100/H200, the worker's MFU denominator there


def model_dims(name, **overrides):
    """The network's shape: the preset's dims, then any override that is not None."""
    if name not in PRESETS:
        raise SystemExit(f"unknown model preset '{name}' (presets: {', '.join(PRESETS)})")
    d = dict(DEFAULTS)
    d.update({k: v for k, v in PRESETS[name].items() if k in DIM_KEYS})
    d.update({k: v for k, v in overrides.items() if v is not None})
    if d["kv_heads"] is None:
        d["kv_heads"] = d["heads"]
    problems = []
    if d["dim"] % d["heads"]:
        problems.append(f"dim {d['dim']} is not a multiple of heads {d['heads']}")
    elif (d["dim"] // d["heads"]) % 2:
        problems.append(f"head_dim {d['dim'] // d['heads']} is odd (rotary pairs need it even)")
    if d["heads"] % d["kv_heads"]:
        problems.append(f"kv_heads {d['kv_heads']} does not divide heads {d['heads']}")
    if problems:
        raise SystemExit("bad model dims: " + "; ".join(problems))
    return {k: d[k] for k in DIM_KEYS}


def parameter_count(d):
    """Parameters of the network, counted from its shapes (the tied head counted once)."""
    hd = d["dim"] // d["heads"]
    qkv = (d["heads"] + 2 * d["kv_heads"]) * hd * d["dim"]
    block = 2 * d["dim"] + qkv + d["dim"] * d["dim"] + 3 * d["dim"] * d["ffn"]
    table = d["vocab"] * d["dim"]
    return table + d["layers"] * block + d["dim"] + (0 if d["tie_embeddings"] else table)


def matmul_parameter_count(d):
    """Parameters taking part in matmuls: all but the embedding lookup (PaLM's convention); a tied
    table is the output head's matmul too, so it stays."""
    return parameter_count(d) - (0 if d["tie_embeddings"] else d["vocab"] * d["dim"])


def flops_per_token(d, seq):
    """Training FLOPs per token, 6 * N_matmul + 12 * L * D * T (PaLM appendix B), as the worker."""
    return 6 * matmul_parameter_count(d) + 12 * d["layers"] * d["dim"] * seq


def preset_table():
    out = {}
    for name, p in PRESETS.items():
        d = model_dims(name)
        out[name] = dict(dims=d, head_dim=d["dim"] // d["heads"], params=parameter_count(d),
                         matmul_params=matmul_parameter_count(d), source=p["source"], left_out=p.get("left_out", []))
    return out


def list_presets(as_json):
    table = preset_table()
    if as_json:
        print(json.dumps({"presets": table}, indent=1))
        return
    print(f"{'preset':12} {'dim':>5} {'layers':>6} {'heads':>5} {'kv':>3} {'hd':>4} {'ffn':>6} {'vocab':>7} "
          f"{'tie':>4} {'theta':>9} {'params':>15}  source")
    for name, t in table.items():
        d = t["dims"]
        print(f"{name:12} {d['dim']:5} {d['layers']:6} {d['heads']:5} {d['kv_heads']:3} {t['head_dim']:4} "
              f"{d['ffn']:6} {d['vocab']:7} {'yes' if d['tie_embeddings'] else 'no':>4} {d['rope_theta']:9g} "
              f"{t['params']:15,}  {t['source']}" + (f" (without {', '.join(t['left_out'])})" if t["left_out"] else ""))


# ---- the network (torch from here on) -----------------------------------------------------------

_MODEL = None


def model_classes():
    """Defines the modules on first use, so that importing this file needs no torch."""
    global _MODEL
    if _MODEL is not None:
        return _MODEL
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-5):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))
            self.eps = eps

        def forward(self, x):
            xf = x.float()
            return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)

    def rope_tables(seq, hd, theta, device):
        inv = 1.0 / torch.pow(theta, torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd)
        freqs = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv)
        return freqs.cos(), freqs.sin()  # [T, hd/2]

    def rotate_pairs(x, cos, sin):  # x [B, T, H, hd]; pairs (x[2i], x[2i+1]) rotate by angle i
        pairs = x.unflatten(-1, (x.shape[-1] // 2, 2))
        x1, x2 = pairs[..., 0], pairs[..., 1]
        c, s = cos[None, :, None, :], sin[None, :, None, :]
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), -1).flatten(-2).to(x.dtype)

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.heads, self.kv_heads = d["heads"], d["kv_heads"]
            self.hd = d["dim"] // d["heads"]
            # The worker's parameter order: attn_norm, wqkv, wo, ffn_norm, w13, w2.
            self.attn_norm = RMSNorm(d["dim"])
            self.wqkv = nn.Linear(d["dim"], (self.heads + 2 * self.kv_heads) * self.hd, bias=False)
            self.wo = nn.Linear(d["dim"], d["dim"], bias=False)
            self.ffn_norm = RMSNorm(d["dim"])
            self.w13 = nn.Linear(d["dim"], 2 * d["ffn"], bias=False)
            self.w2 = nn.Linear(d["ffn"], d["dim"], bias=False)

        def forward(self, x, cos, sin):
            B, T, D = x.shape
            H, KV, hd = self.heads, self.kv_heads, self.hd
            q, k, v = self.wqkv(self.attn_norm(x)).split([H * hd, KV * hd, KV * hd], -1)
            q = rotate_pairs(q.view(B, T, H, hd), cos, sin).transpose(1, 2)
            k = rotate_pairs(k.view(B, T, KV, hd), cos, sin).transpose(1, 2)
            v = v.view(B, T, KV, hd).transpose(1, 2)
            gqa = dict(enable_gqa=True) if KV != H else {}
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)
            h = x + self.wo(a.transpose(1, 2).reshape(B, T, D))
            g, u = self.w13(self.ffn_norm(h)).chunk(2, -1)
            return h + self.w2(F.silu(g) * u)

    class Llama(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.d = d
            self.tok_embeddings = nn.Embedding(d["vocab"], d["dim"])
            self.layers = nn.ModuleList(Block(d) for _ in range(d["layers"]))
            self.norm = RMSNorm(d["dim"])
            # Tied: the head reads the embedding table itself, so there is one parameter (no
            # aliasing for to_empty or FSDP to break).
            self.output = None if d["tie_embeddings"] else nn.Linear(d["dim"], d["vocab"], bias=False)
            self.ckpt = False

        def forward(self, idx):
            cos, sin = rope_tables(idx.shape[1], self.d["dim"] // self.d["heads"], self.d["rope_theta"], idx.device)
            x = self.tok_embeddings(idx)
            for block in self.layers:
                x = checkpoint(block, x, cos, sin, use_reentrant=False) if self.ckpt else block(x, cos, sin)
            head = self.tok_embeddings.weight if self.output is None else self.output.weight
            return F.linear(self.norm(x), head)

    _MODEL = dict(Llama=Llama, RMSNorm=RMSNorm, Block=Block, rope_tables=rope_tables, rotate_pairs=rotate_pairs)
    return _MODEL


def init_parameters(model):
    """N(0, 0.02) for matrices, ones for norm weights, in parameter order."""
    import torch
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02) if p.dim() >= 2 else p.fill_(1.0)


# ---- a training run -----------------------------------------------------------------------------

def run(a):
    import contextlib
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    if a.amp == "fp8":
        raise SystemExit("amp fp8 is the worker's own fused kernels; PyTorch has no built-in fp8 training to "
                         "compare with. Compare `--amp fp8 --compile fused` with this script's bf16 --compile.")
    d = model_dims(a.model, dim=a.dim, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads, ffn=a.ffn,
                   vocab=a.vocab, tie_embeddings=True if a.tie else None, rope_theta=a.rope_theta)
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("no CUDA device visible to PyTorch; use --device cpu for a CPU run")
    if a.amp == "fp16" and not cuda:
        raise SystemExit("fp16 autocast with loss scaling needs a GPU; use bf16 on the CPU (as the worker)")
    distributed = a.mode != "single"
    if distributed:
        if "RANK" not in os.environ:
            raise SystemExit(f"--mode {a.mode} runs under torchrun: torchrun --standalone --nproc-per-node N {sys.argv[0]} ...")
        dist.init_process_group("nccl" if cuda else "gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    local = int(os.environ.get("LOCAL_RANK", 0))
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(dev)
    # As the worker: only "highest" (fp32) forbids TF32 matmuls.
    torch.set_float32_matmul_precision("highest" if a.amp == "fp32" else "high")

    torch.manual_seed(a.seed)  # the same weights on every rank
    with torch.device("meta"):
        m = model_classes()["Llama"](d)
    m.ckpt = a.ckpt
    nparams = sum(p.numel() for p in m.parameters())  # a tied table appears once
    if nparams != parameter_count(d):
        raise SystemExit(f"internal: the module has {nparams} parameters, the count from the shapes {parameter_count(d)}")

    if a.amp == "pure-bf16":  # bf16 parameters, gradients and optimizer state; no autocast
        m.to(torch.bfloat16)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}
    if a.mode == "fsdp":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        param_dtype = half.get(a.fsdp_param_dtype)
        mp = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=torch.float32)
        reshard = a.fsdp_mode == "full_shard"
        for block in m.layers:
            fully_shard(block, mp_policy=mp, reshard_after_forward=reshard)
        fully_shard(m, mp_policy=mp, reshard_after_forward=reshard)
    m.to_empty(device=dev)
    init_parameters(m)

    model = m
    if a.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(m, device_ids=[local] if cuda else None, bucket_cap_mb=a.bucket_mb, gradient_as_bucket_view=True)
        if a.compression != "none":
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            model.register_comm_hook(None, default_hooks.bf16_compress_hook if a.compression == "bf16"
                                     else default_hooks.fp16_compress_hook)
    if a.compile:
        model = torch.compile(model, mode=None if a.compile_mode == "default" else a.compile_mode)
    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, weight_decay=a.weight_decay, fused=cuda or None)
    scaler = torch.amp.GradScaler("cuda") if a.amp == "fp16" else None
    fsdp_half = a.mode == "fsdp" and a.fsdp_param_dtype != "fp32"
    autocast = a.amp in ("bf16", "fp16") and not fsdp_half

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    times, loss = [], None
    if cuda:
        torch.cuda.reset_peak_memory_stats(dev)
    for step in range(a.warmup + a.steps):
        sync()
        t0 = time.perf_counter()
        total = torch.zeros((), device=dev)
        for micro in range(a.accum):
            last = micro == a.accum - 1
            no_sync = a.mode == "ddp" and a.no_sync and not last
            x = torch.randint(0, d["vocab"], (a.batch, a.seq + 1), device=dev)
            with model.no_sync() if no_sync else contextlib.nullcontext():
                with torch.autocast(dev.type, dtype=half.get(a.amp, torch.bfloat16), enabled=autocast):
                    logits = model(x[:, :-1])
                loss = F.cross_entropy(logits.flatten(0, 1).float(), x[:, 1:].flatten()) / a.accum
                (scaler.scale(loss) if scaler else loss).backward()
            total += loss.detach()
        if scaler:
            scaler.unscale_(opt)
        if a.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(m.parameters(), a.grad_clip)
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        times.append(time.perf_counter() - t0)

    measured = times[a.warmup:]
    st = statistics.median(measured)
    peak = torch.cuda.max_memory_allocated(dev) if cuda else 0
    if distributed:
        t = torch.tensor([float(peak)], device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        peak = int(t.item())
    tokens = a.batch * a.seq * a.accum
    res = dict(label=a.label, model=a.model, mode=a.mode, world=world, batch=a.batch, seq=a.seq, accum=a.accum,
               amp=a.amp, compile=a.compile, compile_mode=a.compile_mode if a.compile else None, ckpt=a.ckpt,
               no_sync=a.no_sync, bucket_mb=a.bucket_mb if a.mode == "ddp" else None,
               compression=a.compression if a.mode == "ddp" else None,
               fsdp_mode=a.fsdp_mode if a.mode == "fsdp" else None,
               fsdp_param_dtype=a.fsdp_param_dtype if a.mode == "fsdp" else None,
               dims=d, params=nparams, matmul_params=matmul_parameter_count(d),
               steps=a.steps, warmup=a.warmup, step_ms=round(st * 1e3, 1), min_ms=round(min(measured) * 1e3, 1),
               max_ms=round(max(measured) * 1e3, 1), tok_s_gpu=round(tokens / st),
               mfu=round(flops_per_token(d, a.seq) * tokens / st / (a.peak_tflops * 1e12), 4) if cuda else None,
               peak_gib=round(peak / 2**30, 1) if cuda else None, loss=round(float(total.item()), 3),
               torch=torch.__version__, cuda=torch.version.cuda if cuda else None,
               gpu=torch.cuda.get_device_name(dev) if cuda else None)
    if rank == 0:
        print("RESULT " + json.dumps(res), flush=True)
    if distributed:
        dist.destroy_process_group()


# ---- probes: the figures behind the hardware catalogue's efficiencies and links ------------------

def probe_gemm(a):
    """The GEMMs of one preset's block and head at seq * batch tokens (forward shape, x [tokens, in]
    @ W^T): TFLOP/s of each, median of 20 after 5 warm-up calls. bf16; with --amp fp8 also
    torch._scaled_mm on e4m3 operands with per-tensor scales ("fp8"), and the same with the scaling
    done as separate eager ops at every call: amax, divide, cast of both operands ("fp8-eager-scaling")."""
    import torch
    d = model_dims(a.model, dim=a.dim, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads, ffn=a.ffn,
                   vocab=a.vocab, tie_embeddings=True if a.tie else None, rope_theta=a.rope_theta)
    dev = torch.device("cuda", 0)
    n = a.seq * a.batch
    hd = d["dim"] // d["heads"]
    shapes = dict(wqkv=((d["heads"] + 2 * d["kv_heads"]) * hd, d["dim"]), wo=(d["dim"], d["dim"]),
                  w13=(2 * d["ffn"], d["dim"]), w2=(d["dim"], d["ffn"]), output=(d["vocab"], d["dim"]))
    e4m3 = torch.float8_e4m3fn

    def to_fp8(t):  # per-tensor scale from the amax, as delayed scaling would have it
        scale = torch.finfo(e4m3).max / t.abs().max().float().clamp(min=1e-12)
        return (t.float() * scale).to(e4m3), scale.reciprocal()

    def timed(fn):
        ms = []
        for i in range(25):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            if i >= 5:
                ms.append(s.elapsed_time(e))
        return statistics.median(ms)

    for name, (out_f, in_f) in shapes.items():
        x = torch.randn(n, in_f, device=dev, dtype=torch.bfloat16)
        w = torch.randn(out_f, in_f, device=dev, dtype=torch.bfloat16)
        kinds = {"bf16": lambda: torch.nn.functional.linear(x, w)}
        if a.amp == "fp8":
            (x8, sx), (w8, sw) = to_fp8(x), to_fp8(w)

            def scaled_mm(xq=x8, xs=sx, wq=w8, ws=sw):  # x row-major, W^T column-major, as cuBLASLt wants
                return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16)

            def eager_scaling(x=x, w=w):
                (xq, xs), (wq, ws) = to_fp8(x), to_fp8(w)
                return scaled_mm(xq, xs, wq, ws)

            kinds["fp8"] = scaled_mm
            kinds["fp8-eager-scaling"] = eager_scaling
        for kind, fn in kinds.items():
            t = timed(fn)
            print("RESULT " + json.dumps(dict(probe="gemm", kind=kind, model=a.model, name=name, m=n, n=out_f, k=in_f,
                                              ms=round(t, 4), tflops=round(2 * n * out_f * in_f / t / 1e9, 1),
                                              torch=torch.__version__, gpu=torch.cuda.get_device_name(dev))),
                  flush=True)


def probe_allreduce(a):
    """NCCL all-reduce bus bandwidth (nccl-tests' busbw = 2 (n-1)/n * bytes / time), bf16, from
    1 MiB to 1 GiB; median of 10 after 3 warm-up calls. Run under torchrun; NCCL_* variables set
    outside (NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1) select the path."""
    import torch
    import torch.distributed as dist
    if "RANK" not in os.environ:
        raise SystemExit(f"--probe allreduce runs under torchrun: torchrun --standalone --nproc-per-node 2 {sys.argv[0]} --probe allreduce")
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    torch.cuda.set_device(dev)
    for size in (1 << 20, 25 * 10**6, 1 << 25, 1 << 28, 1 << 30):  # 25 MB: a default DDP bucket
        buf = torch.ones(size // 2, device=dev, dtype=torch.bfloat16)
        ms = []
        for i in range(13):
            torch.cuda.synchronize(dev)
            t0 = time.perf_counter()
            dist.all_reduce(buf)
            torch.cuda.synchronize(dev)
            if i >= 3:
                ms.append((time.perf_counter() - t0) * 1e3)
        t = statistics.median(ms)
        if rank == 0:
            env = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
            print("RESULT " + json.dumps(dict(probe="allreduce", world=world, bytes=size, ms=round(t, 3),
                                              busbw_gbps=round(2 * (world - 1) / world * size / t / 1e6, 1),
                                              nccl=".".join(map(str, torch.cuda.nccl.version())), env=env)), flush=True)
    dist.destroy_process_group()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list-presets", action="store_true", help="print the presets' dims and parameter counts (no torch)")
    p.add_argument("--json", action="store_true", help="with --list-presets: as JSON")
    p.add_argument("--probe", choices=["gemm", "allreduce"], help="a micro-benchmark instead of training")
    p.add_argument("--model", default="7b", help="preset: " + ", ".join(PRESETS))
    p.add_argument("--mode", default="single", choices=["single", "ddp", "fsdp"])
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--batch", type=int, default=1, help="micro-batch per rank")
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--accum", type=int, default=1, help="micro-steps per optimizer step")
    p.add_argument("--no-sync", dest="no_sync", action="store_true", help="DDP: all-reduce on the last micro-step only")
    p.add_argument("--steps", type=int, default=8, help="measured steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--amp", default="bf16", choices=["fp32", "tf32", "bf16", "fp16", "pure-bf16", "fp8"])
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--compile-mode", default="default", choices=["default", "reduce-overhead", "max-autotune"])
    p.add_argument("--ckpt", action="store_true", help="activation checkpointing of every block (non-reentrant)")
    p.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket cap")
    p.add_argument("--compression", default="none", choices=["none", "bf16", "fp16"], help="DDP gradient compression hook")
    p.add_argument("--fsdp-mode", default="full_shard", choices=["full_shard", "shard_grad_op"],
                   help="FSDP2 reshard_after_forward True (ZeRO-3) or False (ZeRO-2-like)")
    p.add_argument("--fsdp-param-dtype", default="bf16", choices=["fp32", "bf16", "fp16"])
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--grad-clip", type=float, default=0.0, help="max global gradient norm; 0 = off")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--peak-tflops", type=float, default=PEAK_TFLOPS, help="MFU denominator (dense bf16 peak)")
    p.add_argument("--label", default="")
    for k in ("dim", "layers", "heads", "kv-heads", "ffn", "vocab"):
        p.add_argument("--" + k, type=int, default=None, help="over the preset")
    p.add_argument("--tie", action="store_true", help="the output head shares the embedding table")
    p.add_argument("--rope-theta", type=float, default=None, help="over the preset")
    a = p.parse_args(argv)
    for k in ("batch", "seq", "accum", "steps"):
        if getattr(a, k) < 1:
            p.error(f"--{k} must be at least 1")
    if a.warmup < 0:
        p.error("--warmup must not be negative")
    return a


def main(argv=None):
    a = parse_args(argv)
    if a.list_presets:
        list_presets(a.json)
    elif a.probe == "gemm":
        probe_gemm(a)
    elif a.probe == "allreduce":
        probe_allreduce(a)
    else:
        run(a)


if __name__ == "__main__":
    main()
