"""A plain CPU loop whose step is nearly all forward, backward and optimizer work: a dense MLP
(--width wide) fed from a DataLoader over tensors in memory, its loss a module (so it is forward
work too), SGD with momentum. Nothing else runs between the phases but the loop's own Python."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--width", type=int, default=1024)
parser.add_argument("--batch-size", type=int, default=256)
args = parser.parse_args()

torch.manual_seed(0)
dataset = TensorDataset(torch.randn(64 * args.batch_size, args.width), torch.randn(64 * args.batch_size, 1))
loader = DataLoader(dataset, batch_size=args.batch_size)
model = nn.Sequential(nn.Linear(args.width, args.width), nn.ReLU(), nn.Linear(args.width, args.width), nn.ReLU(),
                      nn.Linear(args.width, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
for features, targets in loader:
    loss = criterion(model(features), targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
