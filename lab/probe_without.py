"""`python lab/probe_without.py PART PROBE_ARGS...`: tunebench_probe with one of its parts left out
or replaced, to find what a probed step's extra time is (lab/probe_gpu_check.py, WITHOUT=PART,...).
PART:
  ddp_hooks       DDP's buckets untimed: no communication hook (DDP's own all-reduce in C++)
  ddp_timing      the probe's hook without its timing: the same all-reduce and future callback,
                  no CUDA events and no intervals (the recorder's comm_begin returns nothing)
  ddp_torch_hook  PyTorch's own Python default_hooks.allreduce_hook registered instead of the
                  probe's (a Python hook with no probe code in it)
"""
import sys

import tunebench_probe.ddp_hooks as ddp_hooks
import tunebench_probe.recorder as recorder
from tunebench_probe.run import main

part = sys.argv[1]
if part == "ddp_hooks":
    ddp_hooks.DdpHooks.install = lambda self: None
elif part == "ddp_timing":
    recorder.StepRecorder.comm_begin = lambda self, label, nbytes: None
elif part == "ddp_torch_hook":
    def torch_hook(timed, bucket):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        return default_hooks.allreduce_hook(timed.state, bucket)
    ddp_hooks.timed_comm_hook = torch_hook
else:
    raise SystemExit(f"unknown part {part!r}")
sys.exit(main(sys.argv[2:]))
