"""A script that writes what it sees of the knobs to --report (JSON), from the torch objects
themselves, not from the probe: its DataLoader's num_workers and persistent_workers, the NCCL_*
variables of its environment, torch.backends' cudnn.benchmark and TF32 switches when it starts
and inside each forward, each forward's output dtype, and with --ddp (Gloo, torchrun's variables)
what its DistributedDataParallel holds (static_graph, the reducer's static_graph as DDP's logging
data has it, bucket_bytes_cap, gradient_as_bucket_view).

--meddle-at-step S: after step S the script flips those switches itself, as a script that sets
torch.backends.cudnn.benchmark may. --raise-on-rank R --raise-at-step S: rank R raises at step S.
The report is written in `finally`, so also when the probe stops the script after its steps."""
import argparse
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--report", required=True)
parser.add_argument("--ddp", action="store_true")
parser.add_argument("--num-workers", type=int, default=0)
parser.add_argument("--meddle-at-step", type=int, default=-1)
parser.add_argument("--raise-on-rank", type=int, default=-1)
parser.add_argument("--raise-at-step", type=int, default=2)
args = parser.parse_args()


def switches():
    return {"cudnn_benchmark": torch.backends.cudnn.benchmark,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32}


report = {"at_start": switches(), "forward": [], "output_dtypes": [],
          "env": {k: v for k, v in os.environ.items() if k.startswith(("NCCL_", "TORCH_NCCL_"))}}


class Observer(nn.Module):
    """Inside the model's forward: the switches as the script's computation sees them."""

    def forward(self, x):
        report["forward"].append(switches())
        return x


rank = 0
if args.ddp:
    torch.distributed.init_process_group("gloo")
    rank = torch.distributed.get_rank()

torch.manual_seed(0)
dataset = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
loader = DataLoader(dataset, batch_size=8, num_workers=args.num_workers)
report["loader"] = {"num_workers": loader.num_workers, "persistent_workers": loader.persistent_workers}
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), Observer(), nn.Linear(32, 1))
if args.ddp:
    model = nn.parallel.DistributedDataParallel(model)
    logging_data = model._get_ddp_logging_data()
    # DDP's logger has "static_graph" (1) from the reducer once a static graph is set, else no such key
    report["ddp"] = {"static_graph": model.static_graph, "logged_static_graph": logging_data.get("static_graph", 0),
                     "bucket_bytes_cap": model.bucket_bytes_cap,
                     "gradient_as_bucket_view": model.gradient_as_bucket_view}
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
try:
    for step, (features, targets) in enumerate(loader):
        if rank == args.raise_on_rank and step == args.raise_at_step:
            raise ValueError(f"rank {rank} read a bad shard at step {step}\nthe shard file is truncated")
        output = model(features)
        report["output_dtypes"].append(str(output.dtype).replace("torch.", ""))
        loss = nn.functional.mse_loss(output.float(), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step == args.meddle_at_step:
            torch.backends.cudnn.benchmark = not torch.backends.cudnn.benchmark
            torch.backends.cuda.matmul.allow_tf32 = not torch.backends.cuda.matmul.allow_tf32
            torch.backends.cudnn.allow_tf32 = not torch.backends.cudnn.allow_tf32
            report["meddled"] = switches()
finally:
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump(report, f)
