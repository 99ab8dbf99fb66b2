"""The 7B block's GEMMs under each of PyTorch's BLAS back-ends, and the weight gradient's layouts.

    python3 gemm_backend_probe.py [--tokens 2048]

For wqkv, wo, w13 and w2 at the 7B's shapes: the forward (X W^T, bf16), the input gradient (dY W,
bf16) and the weight gradient with an fp32 output (dY^T X, as `compile fused` computes it), each
with torch.backends.cuda.preferred_blas_library cublas and cublaslt; and the weight gradient as
(X^T dY)^T, the other operand order. 20 calls per pair of events, median of 5
(models_probe.time_ms). Prints per GEMM and the sum over 32 blocks per variant."""
import argparse

import torch

from models_probe import time_ms as probe_time_ms


def time_ms(fn):
    return probe_time_ms(fn, reps=5, warmup=3, inner=20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=2048)
    args = ap.parse_args()
    t, dev, bf = args.tokens, "cuda", torch.bfloat16
    shapes = {"wqkv": (3 * 4096, 4096), "wo": (4096, 4096), "w13": (2 * 11008, 4096), "w2": (4096, 11008)}
    totals = {}
    print("gemm | kind | backend | ms")
    for name, (n_out, n_in) in shapes.items():
        x = torch.randn(t, n_in, device=dev, dtype=bf)
        w = torch.randn(n_out, n_in, device=dev, dtype=bf)
        dy = torch.randn(t, n_out, device=dev, dtype=bf)
        for backend in ("cublas", "cublaslt"):
            torch.backends.cuda.preferred_blas_library(backend)
            cases = {
                "forward": lambda: torch.mm(x, w.t()),
                "dX": lambda: torch.mm(dy, w),
                "dW fp32": lambda: torch.mm(dy.t(), x, out_dtype=torch.float32),
                "dW fp32 (X^T dY)^T": lambda: torch.mm(x.t(), dy, out_dtype=torch.float32).t(),
            }
            for kind, fn in cases.items():
                try:
                    ms = time_ms(fn)
                except RuntimeError as e:
                    print(f"{name} | {kind} | {backend} | error: {str(e)[:80]}")
                    continue
                totals[(kind, backend)] = totals.get((kind, backend), 0.0) + ms
                print(f"{name} | {kind} | {backend} | {ms:.3f}")
    torch.backends.cuda.preferred_blas_library("cublas")
    print("sum over the four GEMMs x 32 blocks (ms):")
    for (kind, backend), ms in sorted(totals.items()):
        print(f"  {kind:20s} {backend:9s} {32 * ms:7.2f}")


if __name__ == "__main__":
    main()
