"""A GPU script as users write them: pinned DataLoader batches copied with non_blocking, a small
MLP on cuda, AdamW; --ddp wraps it in DistributedDataParallel over NCCL (ranks from torchrun's
variables). Prints the dtype its model computes in, so a test sees an applied autocast."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--ddp", action="store_true")
args = parser.parse_args()

local_rank = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local_rank)
device = torch.device("cuda", local_rank)
if args.ddp:
    torch.distributed.init_process_group("nccl")


class SyntheticDataset(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return torch.randn(1024, generator=generator), torch.randint(0, 16, (), generator=generator)


loader = DataLoader(SyntheticDataset(), batch_size=64, num_workers=0)
print(f"LOADER num_workers={loader.num_workers} pin_memory={loader.pin_memory}", flush=True)
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.GELU(), nn.Linear(4096, 16))
model = model.to(device)
if args.ddp:
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step, (features, labels) in enumerate(loader):
    features = features.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)
    logits = model(features)
    if step == 0:
        print(f"COMPUTE dtype={logits.dtype}", flush=True)
    loss = nn.functional.cross_entropy(logits.float(), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
