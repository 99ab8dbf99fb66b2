"""A training script whose DataLoader is the bottleneck: the A/B of docs/SCRIPTS.md ("An A/B that
matters").

Each sample takes --read-ms of waiting to load (a slow disk or a remote bucket: time.sleep, so it
costs no CPU), so with the loader in the main process (`num_workers` 0, this script's default) the
model waits for every batch. Loader processes fetch batches while the model trains; Tunebench
applies `num_workers` from outside, the script is not changed:

    tunebench-cli sweep my.tbsession --script docs/examples/slow_loader.py --grid num_workers=0,4 \
        --set steps=12 --set warmup=2
    tunebench-cli report my.tbsession --trials 1,2

Plain PyTorch, no Tunebench import: `python3 docs/examples/slow_loader.py` trains on its own.
"""
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--read-ms", type=float, default=1.5, help="waiting per sample (a slow disk)")
parser.add_argument("--num-workers", type=int, default=0)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()


class SlowImages(Dataset):
    """Synthetic 3x32x32 images in 10 classes, each as slow to load as a file on a busy disk."""

    def __len__(self):
        return 4096

    def __getitem__(self, index):
        time.sleep(args.read_ms / 1000.0)
        generator = torch.Generator().manual_seed(index)
        return torch.randn(3, 32, 32, generator=generator), int(torch.randint(0, 10, (), generator=generator))


model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
loader = DataLoader(SlowImages(), batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.CrossEntropyLoss()

for epoch in range(args.epochs):
    for step, (images, labels) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        if step % 50 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.3f}", flush=True)
