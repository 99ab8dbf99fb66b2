"""A small PyTorch training job of our own, profiled with torch.profiler, to make the traces that
`tunebench-cli import` is tested on (tests/data/traces/). It is deliberately NOT the workbench's
worker: it is what a user's script looks like (nn.Module, DataLoader, torch.optim, DDP or FSDP2).

    python3 make_profiler_traces.py --out DIR --name single-nw0 --num-workers 0
    torchrun --standalone --nproc-per-node 2 make_profiler_traces.py --out DIR --name ddp --mode ddp

Writes DIR/NAME/rank<R>.pt.trace.json.gz (tensorboard_trace_handler's naming, gzip) and, with
--plain, also an export_chrome_trace() .json of rank 0; DIR/NAME/meta.json holds what a test can
check the import against (parameter count, gradient bytes, the steps' own durations).
The dataset spends --sample-cpu-ms of real CPU work per sample, so num_workers matters."""
import argparse, hashlib, json, os, time
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
from torch.profiler import profile, schedule, ProfilerActivity, tensorboard_trace_handler


class Samples(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab, cpu_ms):
        self.n, self.seq, self.vocab, self.cpu_ms = n, seq, vocab, cpu_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        # Real CPU work standing in for tokenisation/augmentation (hashing until the budget is spent).
        end = time.perf_counter() + self.cpu_ms / 1000.0
        h = hashlib.sha256(str(i).encode()).digest()
        while time.perf_counter() < end:
            h = hashlib.sha256(h).digest()
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, self.vocab, (self.seq + 1,), generator=g)


class Block(nn.Module):
    def __init__(self, d, ffn, heads):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, T, 3, self.heads, D // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        return x + self.down(F.gelu(self.up(self.n2(x))))


class TinyGPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, ffn):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, ffn, heads) for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx, ckpt=False):
        x = self.emb(idx)
        for b in self.blocks:
            x = torch.utils.checkpoint.checkpoint(b, x, use_reentrant=False) if ckpt else b(x)
        return self.head(self.norm(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--mode", default="single", choices=["single", "ddp", "fsdp2"])
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--sample-cpu-ms", type=float, default=4.0)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--ckpt", action="store_true")
    p.add_argument("--plain", action="store_true", help="also export_chrome_trace() rank 0 as plain .json")
    a = p.parse_args()

    distributed = a.mode != "single"
    if distributed:
        dist.init_process_group("nccl")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    torch.cuda.set_device(dev)
    torch.manual_seed(0)
    vocab = 8192
    model = TinyGPT(vocab, a.dim, a.layers, a.dim // 64, 4 * a.dim).to(dev)
    n_params = sum(q.numel() for q in model.parameters())
    if a.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    elif a.mode == "fsdp2":
        from torch.distributed.fsdp import fully_shard
        for b in model.blocks:
            fully_shard(b)
        fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    wait, warmup, active = 1, 1, 4
    steps = wait + warmup + active + 1
    data = Samples(steps * a.batch * world, a.seq, vocab, a.sample_cpu_ms)
    sampler = torch.utils.data.distributed.DistributedSampler(data, world, rank, shuffle=False) if distributed else None
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, num_workers=a.num_workers, pin_memory=True,
                                         sampler=sampler, persistent_workers=a.num_workers > 0)
    out_dir = os.path.join(a.out, a.name)
    os.makedirs(out_dir, exist_ok=True)
    step_ms = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(out_dir, worker_name=f"rank{rank}", use_gzip=True),
                 record_shapes=True) as prof:
        t_prev = time.perf_counter()
        for i, batch in enumerate(loader):
            if i >= steps:
                break
            batch = batch.to(dev, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(batch[:, :-1], ckpt=a.ckpt)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), batch[:, 1:].flatten())
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            now = time.perf_counter()
            step_ms.append((now - t_prev) * 1e3)
            t_prev = now
            prof.step()
    if a.plain and rank == 0:
        try:
            prof.export_chrome_trace(os.path.join(out_dir, "rank0.plain.json"))
        except Exception as e:  # older torch versions refuse after a scheduled run
            print("plain export failed:", e, flush=True)
    meta = dict(name=a.name, mode=a.mode, world_size=world, rank=rank, parameters=n_params,
                gradient_bytes_fp32=4 * n_params, num_workers=a.num_workers, sample_cpu_ms=a.sample_cpu_ms,
                batch=a.batch, seq=a.seq, dim=a.dim, layers=a.layers, ckpt=a.ckpt, profiled_steps=active,
                host_step_ms=[round(x, 3) for x in step_ms], torch=torch.__version__)
    if rank == 0:
        with open(os.path.join(out_dir, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
    print("TRACE " + json.dumps(dict(name=a.name, rank=rank, params=n_params,
                                     median_ms=sorted(step_ms)[len(step_ms) // 2])), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
