"""A DDP script over Gloo (init_process_group from torchrun's variables). --own-comm-hook registers
the script's own communication hook (an all-reduce that counts its calls); --print-ddp prints what
DDP was built with, so a test can see the probe's knobs arrive; at the end it prints the sum of its
parameters (seeded: equal runs of equal steps print equal sums). --hang-rank R makes rank R hang at
step --hang-at-step (its peers then wait in their next all-reduce)."""
import time
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--own-comm-hook", action="store_true")
parser.add_argument("--hang-rank", type=int, default=-1, help="this rank sleeps forever at --hang-at-step")
parser.add_argument("--hang-at-step", type=int, default=3)
args = parser.parse_args()

dist.init_process_group("gloo")
rank = dist.get_rank()


class SyntheticDataset(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return torch.randn(64, generator=generator), torch.randint(0, 8, (), generator=generator)


hook_calls = 0


def counting_allreduce(process_group, bucket):
    global hook_calls
    hook_calls += 1
    tensor = bucket.buffer().div_(dist.get_world_size())
    return dist.all_reduce(tensor, group=process_group, async_op=True).get_future().then(lambda f: f.value()[0])


torch.manual_seed(0)
dataset = SyntheticDataset()
loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
# 2.2 MiB of parameters: more than DDP's first bucket (1 MiB), so a small bucket_mb makes more buckets.
model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                              nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8)))
print(f"DDP rank={rank} bucket_bytes_cap={model.bucket_bytes_cap} "
      f"gradient_as_bucket_view={model.gradient_as_bucket_view}", flush=True)
if args.own_comm_hook:
    model.register_comm_hook(None, counting_allreduce)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
try:
    for step, (features, labels) in enumerate(loader):
        if rank == args.hang_rank and step == args.hang_at_step:
            time.sleep(3600)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(features), labels).backward()
        optimizer.step()
finally:
    print(f"HOOK rank={rank} calls={hook_calls} pid={os.getpid()}", flush=True)
    with torch.no_grad():
        print(f"PARAMETERS rank={rank} sum={sum(float(p.double().sum()) for p in model.parameters()):.12e}", flush=True)
