"""`python lab/probe_without.py PART PROBE_ARGS...`: tunebench_probe with one of its parts left out,
to find what a probed step's extra time is (lab/probe_gpu_check.py, WITHOUT=PART). PART:
  ddp_hooks  DDP's buckets untimed (no communication hook; DDP's own all-reduce in C++)
"""
import sys

import tunebench_probe.ddp_hooks as ddp_hooks
from tunebench_probe.run import main

part = sys.argv[1]
if part == "ddp_hooks":
    ddp_hooks.DdpHooks.install = lambda self: None
else:
    raise SystemExit(f"unknown part {part!r}")
sys.exit(main(sys.argv[2:]))
