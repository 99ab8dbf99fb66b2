"""A user's script as Tunebench meets it: a tiny MLP trained from a DataLoader over a synthetic
dataset. Nothing in it knows about the probe. Options let the probe tests shape it: a dataset that
sleeps per batch (a slow disk) or burns CPU per sample (decoding), a forward that sleeps (device
work), an early return, and checks that print what the DataLoader was given and whether a
profiler is recording."""
import argparse
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--batch-sleep-ms", type=float, default=0.0)
parser.add_argument("--sample-cpu-us", type=float, default=200.0)
parser.add_argument("--forward-sleep-ms", type=float, default=0.0)
parser.add_argument("--num-workers", type=int, default=0)
parser.add_argument("--stop-after-steps", type=int, default=0, help="return after this many steps (0: never)")
parser.add_argument("--own-profiler-at", type=int, default=-1,
                    help="run torch.profiler itself from this step on (as a user's script may)")
parser.add_argument("--slow-step-annotation-ms", type=float, default=0.0,
                    help="torch's own wrapper around optimizer.step() (its profiler annotation) takes this long")
parser.add_argument("--report-profiler", action="store_true",
                    help="print whether a torch profiler records, in each step before its optimizer step")
args = parser.parse_args()

if args.slow_step_annotation_ms:
    # Stands for the host work torch wraps around an optimizer's step (the profiler's annotation,
    # step hooks), which a torch.profiler trace counts in the step's optimizer time.
    class SlowStepAnnotation(torch.autograd.profiler.record_function):
        def __enter__(self):
            if self.name.startswith("Optimizer.step#"):
                time.sleep(args.slow_step_annotation_ms / 1000.0)
            return super().__enter__()

    torch.autograd.profiler.record_function = SlowStepAnnotation


class SyntheticDataset(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, index):
        if args.batch_sleep_ms:
            time.sleep(args.batch_sleep_ms / 1000.0 / args.batch_size)
        deadline = time.perf_counter() + args.sample_cpu_us / 1e6
        while time.perf_counter() < deadline:
            pass
        generator = torch.Generator().manual_seed(index)
        return torch.randn(32, generator=generator), torch.randint(0, 4, (), generator=generator)


class SlowForward(nn.Module):
    """Stands in for device work the data loading could hide behind."""

    def forward(self, x):
        time.sleep(args.forward_sleep_ms / 1000.0)
        return x


loader = DataLoader(SyntheticDataset(), batch_size=args.batch_size, num_workers=args.num_workers)
print(f"LOADER num_workers={loader.num_workers} pin_memory={loader.pin_memory}", flush=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), SlowForward(), nn.Linear(64, 4))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
criterion = nn.CrossEntropyLoss()

for step, (features, labels) in enumerate(loader):
    if args.stop_after_steps and step == args.stop_after_steps:
        break
    if step == args.own_profiler_at:
        own_profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        own_profiler.__enter__()
    optimizer.zero_grad()
    loss = criterion(model(features), labels)
    loss.backward()
    if args.report_profiler:
        print(f"PROFILER step={step} on={torch._C._autograd._profiler_enabled()}", flush=True)
    optimizer.step()
    scheduler.step()
print("TRAINING LOOP ENDED", flush=True)
