"""Weight-gradient GEMMs of the 7B block with an fp32 against a bf16 output, and AdamW's passes.

    python3 dw_dtype_probe.py [--tokens 2048]

dW = dY^T X for wqkv, wo, w13 and w2 (the 7B block's shapes), bf16 inputs and fp32 accumulation
either way: one writes fp32 (torch.mm(..., out_dtype=torch.float32), the worker's compile fused
path), the other bf16 (autocast's GEMM, which PyTorch then casts to fp32). Then torch's fused AdamW
over one block's worth of fp32 parameters, and a plain fp32 and bf16 read of one block's gradients,
to price the bytes a bf16 gradient saves. models_probe.time_ms times it: 20 calls per pair of CUDA
events (AdamW 5), median of 5 pairs."""
import argparse

import torch

from models_probe import time_ms as probe_time_ms


def time_ms(fn, inner=20):
    return probe_time_ms(fn, reps=5, warmup=3, inner=inner)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=2048)
    args = ap.parse_args()
    t = args.tokens
    dev = "cuda"
    shapes = {"wqkv": (3 * 4096, 4096), "wo": (4096, 4096), "w13": (2 * 11008, 4096), "w2": (4096, 11008)}
    total32 = total16 = 0.0
    print("gemm | out x in | fp32 out ms | bf16 out ms | TFLOP/s fp32 / bf16")
    for name, (n_out, n_in) in shapes.items():
        dy = torch.randn(t, n_out, device=dev, dtype=torch.bfloat16)
        x = torch.randn(t, n_in, device=dev, dtype=torch.bfloat16)
        f32 = time_ms(lambda: torch.mm(dy.t(), x, out_dtype=torch.float32))
        f16 = time_ms(lambda: torch.mm(dy.t(), x))
        flops = 2.0 * t * n_out * n_in
        total32 += f32
        total16 += f16
        print(f"{name} | {n_out}x{n_in} | {f32:.3f} | {f16:.3f} | {flops / f32 / 1e9:.0f} / {flops / f16 / 1e9:.0f}")
    print(f"per block: fp32 {total32:.3f} ms, bf16 {total16:.3f} ms; x32 blocks: {32 * total32:.1f} vs {32 * total16:.1f} ms")
    n = sum(a * b for a, b in shapes.values())
    g32 = torch.randn(n, device=dev)
    g16 = g32.to(torch.bfloat16)
    r32 = time_ms(lambda: g32.sum())
    r16 = time_ms(lambda: g16.sum())
    print(f"read one block's gradient: fp32 {r32:.3f} ms, bf16 {r16:.3f} ms; x32: {32 * (r32 - r16):.1f} ms saved")
    p = [torch.randn(a * b, device=dev) for a, b in shapes.values()]
    g = [torch.randn_like(x) for x in p]
    m = [torch.zeros_like(x) for x in p]
    v = [torch.zeros_like(x) for x in p]
    s = [torch.zeros((), device=dev) for _ in p]
    adam = time_ms(lambda: torch._fused_adamw_(p, g, m, v, [], s, lr=1e-4, beta1=0.9, beta2=0.999, weight_decay=0.0,
                                             eps=1e-8, amsgrad=False, maximize=False), inner=5)
    gb = 28 * n / adam / 1e6
    print(f"torch fused AdamW, one block: {adam:.3f} ms ({gb:.0f} GB/s at 28 B/param); x32: {32 * adam:.1f} ms")


if __name__ == "__main__":
    main()
