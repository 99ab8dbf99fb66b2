"""Which kernels a LLaMA training step of the PyTorch reference spends its GPU time in (eager and
torch.compile), to choose what the worker's fused kernels must cover (docs/BENCHMARKS.md, issue 10).

    python3 scripts/profile_reference_kernels.py --model 7b [--compile]

Prints the top kernels by total GPU time in one profiled step, grouped into categories, and the
step's total. Also probes the ATen API the worker's fused path relies on."""
import argparse, collections, json, os, sys
import torch, torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_reference as ref  # noqa: E402  (the network, beside this file)


def category(name):
    n = name.lower()
    if "nccl" in n: return "nccl"
    if "flash" in n or "fmha" in n or "attention" in n: return "attention"
    if "gemm" in n or "cutlass" in n or "sm90_xmma" in n or "nvjet" in n or "cublas" in n: return "gemm"
    if "adam" in n or "multi_tensor" in n: return "optimizer"
    if "triton" in n: return "triton (fused)"
    if "memcpy" in n or "memset" in n: return "memcpy/memset"
    if "reduce" in n: return "reduction"
    return "elementwise/other"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="7b")
    p.add_argument("--seq", type=int, default=2048); p.add_argument("--batch", type=int, default=1)
    p.add_argument("--compile", action="store_true"); p.add_argument("--top", type=int, default=30)
    a = p.parse_args()
    dev = torch.device("cuda", 0); torch.cuda.set_device(dev)
    torch.set_float32_matmul_precision("high")
    c = ref.model_dims(a.model)
    with torch.device("meta"):
        m = ref.model_classes()["Llama"](c)
    m.to_empty(device=dev)
    ref.init_parameters(m)
    model = torch.compile(m) if a.compile else m
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)

    def step():
        x = torch.randint(0, c["vocab"], (a.batch, a.seq + 1), device=dev)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), x[:, 1:].flatten())
            loss.backward()
        opt.step(); opt.zero_grad(set_to_none=True)

    for _ in range(3): step()
    torch.cuda.synchronize()
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(); torch.cuda.synchronize()
    kernels = collections.defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            t = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            kernels[e.name][0] += t; kernels[e.name][1] += 1
    total = sum(v[0] for v in kernels.values())
    cats = collections.defaultdict(float)
    for k, v in kernels.items(): cats[category(k)] += v[0]
    tag = f"{a.model}{' compile' if a.compile else ' eager'}"
    print(f"== {tag}: GPU busy {total/1e3:.1f} ms in one step, {sum(v[1] for v in kernels.values())} kernels")
    for k, v in sorted(cats.items(), key=lambda kv: -kv[1]):
        print(f"  {k:22s} {v/1e3:8.2f} ms  {100*v/total:5.1f} %")
    print(f"-- top {a.top} kernels ({tag})")
    for k, v in sorted(kernels.items(), key=lambda kv: -kv[1][0])[: a.top]:
        print(f"  {v[0]/1e3:8.2f} ms  x{v[1]:4d}  {k[:110]}")
    print("KERNELS " + json.dumps(dict(tag=tag, total_ms=total / 1e3, categories={k: v / 1e3 for k, v in cats.items()})))


def probe_api():
    print("== API probe", torch.__version__)
    for op in ["aten::_scaled_mm", "aten::mm", "aten::addmm", "aten::_fused_rms_norm", "aten::_fused_adamw_"]:
        try:
            for s in torch._C._jit_get_schemas_for_operator(op):
                print("  ", s)
        except Exception as e:
            print("  ", op, "missing", e)
    a = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    try:
        o = torch.mm(a, b, out_dtype=torch.float32); print("   mm out_dtype fp32 ok", o.dtype)
    except Exception as e:
        print("   mm out_dtype:", e)


if __name__ == "__main__":
    if "--probe" in sys.argv:
        probe_api()
    else:
        main()
