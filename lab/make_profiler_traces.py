"""A small PyTorch training job of our own, profiled with torch.profiler, to make the traces that
`tunebench-cli import` is tested on (tests/data/traces/). It is deliberately NOT the workbench's
worker: it is what a user's script looks like (nn.Module, DataLoader, torch.optim, DDP or FSDP2).

    python3 make_profiler_traces.py --out DIR --name single-nw0 --num-workers 0
    torchrun --standalone --nproc-per-node 2 make_profiler_traces.py --out DIR --name ddp --mode ddp

The GPU-idle test data (docs/ANALYSIS.md, "GPU busy and GPU idle"):
    --model cnn --batch 8          a small ResNet-like CNN with BatchNorm: launch-bound (single or ddp)
    --item-every-step              calls loss.item() after the forward of every step: sync-bound
    --dim 2048 --layers 8 --seq 1024 --batch 16   the GPU-bound control (dim 1024 was not: 16 % idle)

Writes DIR/NAME/rank<R>.pt.trace.json.gz (tensorboard_trace_handler's naming, gzip) and, with
--plain, also an export_chrome_trace() .json of rank 0; DIR/NAME/meta.json holds what a test can
check the import against (parameter count, gradient bytes, the steps' own durations).
The dataset spends --sample-cpu-ms of real CPU work per sample, so num_workers matters."""
import argparse, hashlib, json, os, time
import torch, torch.nn as nn, torch.nn.functional as F
import torch.distributed as dist
from torch.profiler import profile, schedule, ProfilerActivity, tensorboard_trace_handler


def sample_work(i, cpu_ms):
    """Real CPU work standing in for tokenisation/augmentation (hashing until the budget is spent);
    returns the sample's generator."""
    end = time.perf_counter() + cpu_ms / 1000.0
    h = hashlib.sha256(str(i).encode()).digest()
    while time.perf_counter() < end:
        h = hashlib.sha256(h).digest()
    return torch.Generator().manual_seed(i)


class Samples(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab, cpu_ms):
        self.n, self.seq, self.vocab, self.cpu_ms = n, seq, vocab, cpu_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randint(0, self.vocab, (self.seq + 1,), generator=sample_work(i, self.cpu_ms))


class ResBlock(nn.Module):
    """conv-BN-ReLU-conv-BN plus the shortcut: many small kernels per image at batch 8."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(y)) + self.short(x))


class SmallResNet(nn.Module):
    """ResNet-18-like on 64x64 images: 4 stages of 2 blocks (widths 32..256), 10 classes."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        blocks, cin = [], 32
        for cout, stride in ((32, 1), (64, 2), (128, 2), (256, 2)):
            blocks += [ResBlock(cin, cout, stride), ResBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(cin, classes)

    def forward(self, x, ckpt=False):
        return self.head(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1))


class Images(torch.utils.data.Dataset):
    def __init__(self, n, size, cpu_ms):
        self.n, self.size, self.cpu_ms = n, size, cpu_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = sample_work(i, self.cpu_ms)
        return torch.randn(3, self.size, self.size, generator=g), torch.randint(0, 10, (), generator=g)


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
    p.add_argument("--model", default="gpt", choices=["gpt", "cnn"])
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--item-every-step", action="store_true",
                   help="call loss.item() after every forward (a logging loop's host sync)")
    p.add_argument("--active", type=int, default=4, help="profiled steps")
    p.add_argument("--no-shapes", action="store_true", help="record_shapes off (smaller traces)")
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
    cnn = a.model == "cnn"
    model = (SmallResNet() if cnn else TinyGPT(vocab, a.dim, a.layers, a.dim // 64, 4 * a.dim)).to(dev)
    n_params = sum(q.numel() for q in model.parameters())
    if a.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    elif a.mode == "fsdp2":
        from torch.distributed.fsdp import fully_shard
        for b in model.blocks:
            fully_shard(b)
        fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    wait, warmup, active = 1, 1, a.active
    steps = wait + warmup + active + 1
    data = (Images(steps * a.batch * world, a.image_size, a.sample_cpu_ms) if cnn
            else Samples(steps * a.batch * world, a.seq, vocab, a.sample_cpu_ms))
    sampler = torch.utils.data.distributed.DistributedSampler(data, world, rank, shuffle=False) if distributed else None
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, num_workers=a.num_workers, pin_memory=True,
                                         sampler=sampler, persistent_workers=a.num_workers > 0)
    out_dir = os.path.join(a.out, a.name)
    os.makedirs(out_dir, exist_ok=True)
    step_ms = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(out_dir, worker_name=f"rank{rank}", use_gzip=True),
                 record_shapes=not a.no_shapes) as prof:
        t_prev = time.perf_counter()
        losses = []
        for i, batch in enumerate(loader):
            if i >= steps:
                break
            if cnn:
                images, labels = batch[0].to(dev, non_blocking=True), batch[1].to(dev, non_blocking=True)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(images)
                loss = F.cross_entropy(logits.float(), labels)
            else:
                batch = batch.to(dev, non_blocking=True)
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(batch[:, :-1], ckpt=a.ckpt)
                loss = F.cross_entropy(logits.flatten(0, 1).float(), batch[:, 1:].flatten())
            if a.item_every_step:
                losses.append(loss.item())  # the host waits for the forward before backward is issued
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
    meta = dict(name=a.name, mode=a.mode, model=a.model, item_every_step=a.item_every_step,
                world_size=world, rank=rank, parameters=n_params,
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
