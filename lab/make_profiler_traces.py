"""A small PyTorch training job of our own, profiled with torch.profiler, to make the traces that
`tunebench-cli import` is tested on (tests/data/traces/). It is deliberately NOT the workbench's
worker: it is what a user's script looks like (nn.Module, DataLoader, torch.optim, DDP or FSDP2).

    python3 make_profiler_traces.py --out DIR --name single-nw0 --num-workers 0
    torchrun --standalone --nproc-per-node 2 make_profiler_traces.py --out DIR --name ddp --mode ddp

The GPU-idle test data (docs/ANALYSIS.md, "GPU busy and GPU idle"):
    --model cnn --batch 8          a small ResNet-like CNN with BatchNorm: launch-bound (single or ddp)
    --item-every-step              calls loss.item() after the forward of every step: sync-bound
    --dim 2048 --layers 8 --seq 1024 --batch 16   the GPU-bound control (dim 1024 was not: 16 % idle)

The waits of issue 40 (docs/ANALYSIS.md, "GPU busy and GPU idle"; `scripts/gpu-bench.sh waits`):
    --scenario streams --delay-ms 5     one process, two streams: stream A is held by a host function
                                        sleeping DELAY (cuLaunchHostFunc + usleep, no Python in it),
                                        an event recorded after it, stream B waits on the event and its
                                        next kernel, launched ~0.1 ms after the GPU ran dry, starts
                                        DELAY later: a dependency wait of known length from its
                                        launch (CUDA sync records on)
    --scenario graph                    a small GPT step captured as one CUDA graph (~1 ms), 60 steps,
                                        2 of them profiled: sampled among unsampled short steps
    --scenario gloo-delay --delay-ms 20 (torchrun, 2 ranks, one GPU is enough) forward/backward, then
                                        one Gloo all-reduce of the gradients per step; rank 1 sleeps
                                        DELAY before it: the other waits inside the collective
                                        (--backend nccl: the same through NCCL, one GPU per rank: the
                                        import sees the all-reduce as NCCL kernels)

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


# ---- the waits of issue 40 -----------------------------------------------------------------------

def cuda_sync_config():
    """Kineto's CUDA synchronisation records (cudaStreamWaitEvent's streams and event), where this
    torch has them."""
    try:
        return torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    except Exception as e:  # older torch
        print("no CUDA sync records:", e, flush=True)
        return None


def profiled(out_dir, rank, sched, sync_records=False):
    kw = dict(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
              on_trace_ready=tensorboard_trace_handler(out_dir, worker_name=f"rank{rank}", use_gzip=True))
    cfg = cuda_sync_config() if sync_records else None
    if cfg is not None:
        kw["experimental_config"] = cfg
    return profile(**kw)


def scenario_streams(a, out_dir):
    """Stream A held DELAY by a host function; stream B's next kernel waits on A's event."""
    import ctypes
    dev = torch.device("cuda", 0)
    libcuda, libc = ctypes.CDLL("libcuda.so.1"), ctypes.CDLL(None)
    libcuda.cuLaunchHostFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    usleep = ctypes.cast(libc.usleep, ctypes.c_void_p)  # void fn(void* us): usleep reads it as its argument
    delay_us = int(a.delay_ms * 1000)
    side, main_stream = torch.cuda.Stream(dev), torch.cuda.current_stream(dev)
    x = torch.randn(1024, 1024, device=dev)
    steps, rows = 8, []
    with profiled(out_dir, 0, schedule(wait=1, warmup=1, active=a.active, repeat=1), sync_records=True) as prof:
        for i in range(steps):
            t0 = time.perf_counter()
            y = x @ x                                       # stream B (main): a short kernel
            with torch.cuda.stream(side):
                libcuda.cuLaunchHostFunc(ctypes.c_void_p(side.cuda_stream), usleep, ctypes.c_void_p(delay_us))
                ev = torch.cuda.Event()
                ev.record(side)                              # completes when the host function returns
            main_stream.wait_event(ev)                       # cudaStreamWaitEvent(B, event of A)
            z = y @ x                                        # queued now, runs ~DELAY later
            torch.cuda.synchronize()
            rows.append((time.perf_counter() - t0) * 1e3)
            prof.step()
    return dict(delay_ms=a.delay_ms, host_step_ms=[round(r, 3) for r in rows], z_sum=float(z.sum()))


def scenario_graph(a, out_dir):
    """A small GPT step (forward, backward, AdamW) captured as one CUDA graph; 2 of 60 steps profiled."""
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    vocab = 8192
    model = TinyGPT(vocab, a.dim, a.layers, max(1, a.dim // 64), 4 * a.dim).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=True)
    host_batch = torch.randint(0, vocab, (a.batch, a.seq + 1))  # pageable, copied in every step
    static = host_batch.to(dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):  # no cache under capture
            logits = model(static[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1).float(), static[:, 1:].flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step()
    # One profiled window (one trace file: the import reads it as one rank) of 2 steps among 60, as
    # the worker samples 2 of every 20; meta.json keeps every step's host time and which were profiled.
    sampled, steps, first = 2, 60, 38
    rows, flags = [], []
    with profiled(out_dir, 0, schedule(wait=first - 1, warmup=1, active=sampled, repeat=1)) as prof:
        for i in range(steps):
            t0 = time.perf_counter()
            static.copy_(host_batch, non_blocking=False)
            graph.replay()
            torch.cuda.synchronize()
            rows.append((time.perf_counter() - t0) * 1e3)
            flags.append(first <= i < first + sampled)
            prof.step()
    return dict(host_step_ms=[round(r, 4) for r in rows], profiled=flags, loss=float(static_loss))


def scenario_gloo_delay(a, out_dir):
    """Two ranks through Gloo (one GPU is enough; --backend nccl: one GPU each); rank 1 sleeps DELAY
    before each all-reduce."""
    dist.init_process_group(a.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    torch.manual_seed(0)
    vocab = 8192
    model = TinyGPT(vocab, a.dim, a.layers, max(1, a.dim // 64), 4 * a.dim).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = torch.randint(0, vocab, (a.batch, a.seq + 1), device=dev)
    steps, rows = 2 + a.active + 1, []
    with profiled(out_dir, rank, schedule(wait=1, warmup=1, active=a.active, repeat=1)) as prof:
        for i in range(steps):
            t0 = time.perf_counter()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(batch[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), batch[:, 1:].flatten())
            loss.backward()
            flat = torch.cat([q.grad.flatten() for q in model.parameters()])
            torch.cuda.synchronize()
            if rank == 1:
                time.sleep(a.delay_ms / 1000.0)  # the injected delay: rank 1 arrives late
            dist.all_reduce(flat)
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            rows.append((time.perf_counter() - t0) * 1e3)
            prof.step()
    meta = dict(delay_ms=a.delay_ms, delayed_rank=1, world_size=world, rank=rank, backend=a.backend,
                gradient_bytes_fp32=4 * sum(q.numel() for q in model.parameters()),
                host_step_ms=[round(r, 3) for r in rows])
    dist.destroy_process_group()
    return meta


def run_scenario(a):
    out_dir = os.path.join(a.out, a.name)
    os.makedirs(out_dir, exist_ok=True)
    fn = {"streams": scenario_streams, "graph": scenario_graph, "gloo-delay": scenario_gloo_delay}[a.scenario]
    meta = dict(name=a.name, scenario=a.scenario, torch=torch.__version__, **fn(a, out_dir))
    if meta.get("rank", 0) == 0:
        with open(os.path.join(out_dir, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
    print("TRACE " + json.dumps(dict(name=a.name, scenario=a.scenario, rank=meta.get("rank", 0))), flush=True)


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
    p.add_argument("--scenario", default="train", choices=["train", "streams", "graph", "gloo-delay"],
                   help="train: the training job; the others: the waits of issue 40 (above)")
    p.add_argument("--delay-ms", type=float, default=5.0, help="streams / gloo-delay: the injected delay")
    p.add_argument("--backend", default="gloo", choices=["gloo", "nccl"],
                   help="gloo-delay: gloo (two ranks may share one GPU) or nccl (one GPU per rank)")
    a = p.parse_args()
    if a.scenario != "train":
        run_scenario(a)
        return

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
