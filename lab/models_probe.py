"""Measurements behind the model-shape decisions (scripts/gpu-bench.sh models-probe), PyTorch only.

  1. SDPA: forward + backward of causal attention for head sizes 64-256 (100 padded by PyTorch
     and padded by the caller), bf16 (and fp16 at 128), grouped-query ratios 1 and 4, through each
     backend forced alone (cuDNN, flash, memory-efficient) and PyTorch's own choice, with the
     choice named (torch._fused_sdp_choice). Inputs in the worker's layout ([B, T, H, hd] memory).
  2. GEMMs: TFLOP/s of every GEMM a step of each model runs (forward, input and weight gradient
     of q/k/v, o, gate/up, down and the output head) at 2,048 tokens, beside what core/predict's
     gemm_shape_factor makes of the shape (the same formula, the catalogue's constants).
Prints JSON lines ("PROBE {...}") and a table of each. Usage: python3 models_probe.py [--quick]
"""
import argparse, json, math, statistics, sys

import torch
import torch.nn.functional as F

DEV = torch.device("cuda")
BACKEND_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn"}


def time_ms(fn, reps=10, warmup=3, inner=10):
    # `inner` calls between two events: a single call would count the host's launch of it (tens of
    # microseconds from Python, the GPU idle after the first event), which a training step, queuing
    # its kernels ahead, does not pay. (The 2026-12-02 probe timed single calls: its small GEMMs
    # carry that launch, see lab/fit_models_probe.py's MAX_FIXED_GFLOP.)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / inner)
    return statistics.median(times)


def sdpa_probe(quick):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    B, T, H = 1, 2048, 32
    rows = []
    cases = [(hd, torch.bfloat16) for hd in (64, 80, 96, 100, 112, 128, 256)] + [(128, torch.float16)]
    for hd, dtype in cases:
        for ratio in ((1, 4) if not quick else (1,)):
            kv = H // ratio
            for pad in ((0, 104) if hd == 100 else (0,)):
                w = pad or hd

                def make(heads):
                    x = torch.randn(B, T, heads, w, device=DEV, dtype=dtype)
                    if pad:
                        x[..., hd:] = 0
                    return x.transpose(1, 2).requires_grad_(True)

                q, k, v = make(H), make(kv), make(kv)
                g = torch.randn(B, H, T, w, device=DEV, dtype=dtype)
                scale = 1 / math.sqrt(hd) if pad else None
                flops = 4 * B * H * T * T * hd / 2 * 3.5  # causal: forward 2 products, backward 2.5x
                default = torch._fused_sdp_choice(q, k, v, is_causal=True, scale=scale, enable_gqa=kv != H)

                def step():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, enable_gqa=kv != H)
                    torch.autograd.grad(o, (q, k, v), g)

                for name, be in [("default", None)] + list(backends.items()):
                    try:
                        if be is None:
                            ms = time_ms(step)
                        else:
                            with sdpa_kernel([be]):
                                ms = time_ms(step)
                        r = dict(probe="sdpa", head_dim=hd, padded=pad or None, dtype=str(dtype).split(".")[-1],
                                 heads=H, kv_heads=kv, backend=name, ms=round(ms, 3),
                                 tflops=round(flops / ms / 1e9, 1),
                                 default=BACKEND_NAMES.get(int(default), str(int(default))))
                    except RuntimeError as e:
                        r = dict(probe="sdpa", head_dim=hd, padded=pad or None, dtype=str(dtype).split(".")[-1],
                                 heads=H, kv_heads=kv, backend=name, error=str(e).splitlines()[0][:100])
                    rows.append(r)
                    print("PROBE " + json.dumps(r), flush=True)
    print("\n%-9s %-5s %-9s %9s %9s %9s %9s  %s" % ("head_dim", "gqa", "dtype", "default", "cudnn", "flash",
                                                    "efficient", "(TFLOP/s fwd+bwd; default = PyTorch's pick)"))
    key = lambda r: (r["head_dim"], r.get("padded"), r["kv_heads"], r["dtype"])
    seen = []
    for r in rows:
        if key(r) not in seen:
            seen.append(key(r))
    for k in seen:
        cells = {r["backend"]: r for r in rows if key(r) == k}
        f = lambda n: ("%9.0f" % cells[n]["tflops"]) if n in cells and "tflops" in cells[n] else "%9s" % "-"
        hd = "%d%s" % (k[0], "->%d" % k[1] if k[1] else "")
        d = cells.get("default", {}).get("default", "?")
        print("%-9s %-5s %-9s %9s %s %s %s  default=%s" % (hd, "%d:1" % (32 // k[2]), k[3], f("default"), f("cudnn"),
                                                            f("flash"), f("efficient"), d))


# core/predict/gemm_shape.cpp with the catalogue's constants (tile 128 x 256, K overhead 128,
# wave weight 0.5, 132 SMs), normalised to an 8192^3 GEMM.
def shape_factor(m, n, k, sms=132, tm=128, tn=256, k0=128, ww=0.5):
    def grid(a, b):
        ta, tb = math.ceil(a / tm), math.ceil(b / tn)
        pad = a * b / (ta * tm * tb * tn)
        tiles = ta * tb
        fill = tiles / (math.ceil(tiles / sms) * sms)
        return pad * (1 - ww * (1 - fill))
    f = lambda m, n, k: max(grid(m, n), grid(n, m)) * k / (k + k0)
    return min(1.0, f(m, n, k) / f(8192, 8192, 8192))


MODELS = {  # dim, ffn, kv_dim, vocab
    "7b": (4096, 11008, 4096, 32000), "d3200-hd100": (3200, 8640, 3200, 32000),
    "llama3.1-8b": (4096, 14336, 1024, 128256), "mistral-7b": (4096, 14336, 1024, 32768),
    "qwen2.5-7b": (3584, 18944, 512, 152064), "phi3-mini": (3072, 8192, 3072, 32064),
    "llama3.2-1b": (2048, 8192, 512, 128256), "hd80": (2560, 6912, 640, 50304), "hd112": (3584, 9728, 896, 32000),
}


def gemm_probe(quick, tokens=2048):
    print("\n%-12s %-22s %7s %7s %7s %9s %9s" % ("model", "gemm", "m", "n", "k", "TFLOP/s", "factor"))
    summary = []
    for model, (D, Fd, KV, V) in MODELS.items():
        if quick and model not in ("7b", "d3200-hd100", "llama3.1-8b"):
            continue
        layers = [("wqkv", D, D + 2 * KV), ("wo", D, D), ("w13", D, 2 * Fd), ("w2", Fd, D), ("head", D, V)]
        total_flops, total_ms = 0.0, 0.0
        for name, inp, out in layers:
            for kind, (m, n, k) in (("fwd", (tokens, out, inp)), ("dgrad", (tokens, inp, out)),
                                    ("wgrad", (out, inp, tokens))):
                a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
                b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
                ms = time_ms(lambda: torch.mm(a, b), reps=8)
                tf = 2 * m * n * k / ms / 1e9
                total_flops += 2 * m * n * k
                total_ms += ms
                r = dict(probe="gemm", model=model, gemm=name + " " + kind, m=m, n=n, k=k, ms=round(ms, 4),
                         tflops=round(tf, 1), factor=round(shape_factor(m, n, k), 3))
                print("PROBE " + json.dumps(r), flush=True)
                print("%-12s %-22s %7d %7d %7d %9.0f %9.3f" % (model, name + " " + kind, m, n, k, tf, r["factor"]))
        summary.append((model, total_flops / total_ms / 1e9))
    print("\n%-12s %s" % ("model", "all GEMMs of a step, TFLOP/s"))
    for model, tf in summary:
        print("%-12s %.0f" % (model, tf))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", choices=["sdpa", "gemm"])
    a = p.parse_args()
    print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name())
    if a.only in (None, "sdpa"):
        sdpa_probe(a.quick)
    if a.only in (None, "gemm"):
        gemm_probe(a.quick)


if __name__ == "__main__":
    sys.exit(main())
