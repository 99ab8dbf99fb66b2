"""A loop without a torch optimizer: parameters updated by hand. --marker calls the probe's step
marker (with the one-liner that keeps the script running without the probe); without it the
probe sees no step at all."""
import argparse

import torch
import torch.nn as nn

try:
    from tunebench_probe import step_done
except ImportError:
    def step_done():
        pass

parser = argparse.ArgumentParser()
parser.add_argument("--marker", action="store_true")
parser.add_argument("--iterations", type=int, default=1000000)
args = parser.parse_args()

model = nn.Linear(16, 1)
for iteration in range(args.iterations):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter -= 0.01 * parameter.grad
            parameter.grad = None
    if args.marker:
        step_done()
print("LOOP ENDED", flush=True)
