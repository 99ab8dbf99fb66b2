"""A script that goes wrong at its step 3: --how raise (an exception), exit (sys.exit(3)), or hang
(sleeps, as a rank waiting forever)."""
import argparse
import sys
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--how", choices=("raise", "exit", "hang"), default="raise")
args = parser.parse_args()

model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    if step == 3:
        if args.how == "raise":
            raise ValueError(f"bad batch at step {step}\nthe labels are out of range")
        if args.how == "exit":
            sys.exit(3)
        time.sleep(3600)
    optimizer.zero_grad()
    model(torch.randn(4, 8)).pow(2).mean().backward()
    optimizer.step()
