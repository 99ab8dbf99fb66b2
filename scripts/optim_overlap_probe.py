"""Can AdamW run under the backward? The 7B block's backward work against each block's AdamW, one
after the other or with each block's update on a second stream as soon as its gradients exist.

    python3 optim_overlap_probe.py [--blocks 16] [--tokens 2048]

Per block, in backward order: the input-gradient GEMMs (bf16) and weight-gradient GEMMs (fp32 out,
as the worker's `compile fused`) of wqkv, wo, w13 and w2, and a causal SDPA forward + backward
(32 heads of 128) standing in for the attention and the memory-bound kernels. AdamW is torch's fused
kernel over the block's four fp32 matrices (the worker's own kernel moves the same bytes). Variants:

    serial        every block's backward, then every block's AdamW (the worker today)
    overlap       block b's AdamW on a side stream once block b's gradients are queued
    overlap-prio  the same, the backward's stream at high priority, AdamW's at low

Prints the median of 5 timed passes (CUDA events on the main stream, after it waits for the side
stream) and how much of AdamW's own time the overlap hid."""
import argparse
import statistics

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=2048)
    args = ap.parse_args()
    dev, t, nb = "cuda", args.tokens, args.blocks
    shapes = [(3 * 4096, 4096), (4096, 4096), (2 * 11008, 4096), (4096, 11008)]  # (out, in)
    bf = torch.bfloat16
    dys = [torch.randn(t, o, device=dev, dtype=bf) for o, _ in shapes]
    xs = [torch.randn(t, i, device=dev, dtype=bf) for _, i in shapes]
    ws = [torch.randn(o, i, device=dev, dtype=bf) for o, i in shapes]
    q, k, v = (torch.randn(1, 32, t, 128, device=dev, dtype=bf, requires_grad=True) for _ in range(3))
    go = torch.randn(1, 32, t, 128, device=dev, dtype=bf)
    blocks = []
    for _ in range(nb):
        p = [torch.randn(o * i, device=dev) * 0.01 for o, i in shapes]
        blocks.append({"p": p, "g": [torch.zeros_like(x) for x in p], "m": [torch.zeros_like(x) for x in p],
                       "v": [torch.zeros_like(x) for x in p], "s": [torch.zeros((), device=dev) for _ in p]})

    def backward(b):
        for j, (o, i) in enumerate(shapes):
            torch.mm(dys[j], ws[j])  # dX
            blocks[b]["g"][j].view(o, i).copy_(torch.mm(dys[j].t(), xs[j], out_dtype=torch.float32))  # dW
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(go)

    def adam(b):
        s = blocks[b]
        torch._fused_adamw_(s["p"], s["g"], s["m"], s["v"], [], s["s"], lr=1e-4, beta1=0.9, beta2=0.999,
                            weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)

    def serial(main, side):
        with torch.cuda.stream(main):
            for b in reversed(range(nb)):
                backward(b)
            for b in reversed(range(nb)):
                adam(b)

    def overlap(main, side):
        with torch.cuda.stream(main):
            for b in reversed(range(nb)):
                backward(b)
                ev = torch.cuda.Event()
                ev.record(main)
                side.wait_event(ev)
                with torch.cuda.stream(side):
                    adam(b)
            main.wait_stream(side)

    def backward_only(main, side):
        with torch.cuda.stream(main):
            for b in reversed(range(nb)):
                backward(b)

    def adam_only(main, side):
        with torch.cuda.stream(main):
            for b in reversed(range(nb)):
                adam(b)

    def timed(fn, main, side, reps=5, warmup=2):
        for _ in range(warmup):
            fn(main, side)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(main)
            fn(main, side)
            z.record(main)
            z.synchronize()
            times.append(a.elapsed_time(z))
        return statistics.median(times), min(times), max(times)

    lo, hi = torch.cuda.Stream.priority_range() if hasattr(torch.cuda.Stream, "priority_range") else (0, -1)
    plain_main, plain_side = torch.cuda.Stream(), torch.cuda.Stream()
    # CUDA: a lower number is a higher priority; torch.cuda.Stream takes priority in [-N, 0].
    prio_main, prio_side = torch.cuda.Stream(priority=-1), torch.cuda.Stream(priority=0)
    rows = [("backward only", backward_only, plain_main, plain_side),
            ("adamw only", adam_only, plain_main, plain_side),
            ("serial", serial, plain_main, plain_side),
            ("overlap", overlap, plain_main, plain_side),
            ("overlap-prio", overlap, prio_main, prio_side),
            ("serial (again)", serial, plain_main, plain_side)]
    res = {}
    print(f"{nb} blocks of the 7B at {t} tokens; stream priority range {lo}..{hi}")
    print("variant | median ms | min | max")
    for name, fn, m, s in rows:
        med, mn, mx = timed(fn, m, s)
        res[name] = med
        print(f"{name} | {med:.2f} | {mn:.2f} | {mx:.2f}")
    ser = min(res["serial"], res["serial (again)"])
    for name in ("overlap", "overlap-prio"):
        hidden = (ser - res[name]) / res["adamw only"]
        print(f"{name}: {ser - res[name]:+.2f} ms against serial, {100 * hidden:.0f} % of AdamW's "
              f"{res['adamw only']:.2f} ms hidden; x32/{nb} blocks: {(ser - res[name]) * 32 / nb:.1f} ms per 7B step")


if __name__ == "__main__":
    main()
