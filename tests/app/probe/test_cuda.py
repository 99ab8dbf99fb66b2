"""On a GPU: phases timed with CUDA events (no per-step synchronisation), host-to-device copies,
the loss read back asynchronously, CUDA memory counters, NVML telemetry, an applied bf16 autocast
and the loader knobs, DDP over NCCL (one rank: the buckets are still hooked and timed),
torch.compile where torch has it, and kernel-sampled steps whose traces hold the device's kernels.
Skipped where torch sees no GPU."""
import json
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import (ProbeProcess, ProbeTestCase, free_port, gpu_missing_reason, main_or_skip,  # noqa: E402
                           run_all)

STEPS, WARMUP = 8, 2


class OnAGpu(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if gpu_missing_reason():
            raise unittest.SkipTest(gpu_missing_reason())
        import torch
        cls.has_compile = hasattr(torch, "compile")
        # Steps 2-3 and 6-7 kernel-sampled (kernel_sampler.py).
        common = {"steps": STEPS, "warmup": WARMUP, "gpu_sample_hz": 20, "kernel_sample_every": 4,
                  "kernel_sample_steps": 2}
        knobs = {"script_knobs": ["amp", "cudnn_benchmark", "num_workers", "pin_memory"], "amp": "bf16",
                 "cudnn_benchmark": True, "num_workers": 2, "pin_memory": True}
        runs = [ProbeProcess(cls.workdir, "cuda", {**common, **knobs}, "train_cuda.py"),
                ProbeProcess(cls.workdir, "nccl", common, "train_cuda.py", ["--ddp"], world_size=1,
                             extra_env={"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0",
                                        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())})]
        if cls.has_compile:
            runs.append(ProbeProcess(cls.workdir, "compiled", {**common, "script_knobs": ["compile"],
                                                                "compile": "torch"}, "train_cuda.py"))
        results = run_all(runs, timeout_s=400)
        cls.cuda, cls.nccl = results[:2]
        cls.compiled = results[2] if cls.has_compile else None

    def test_steps_and_phases_from_cuda_events(self):
        self.assert_ends_with_done(self.cuda, 0)
        self.assertEqual(self.cuda.of_type("hello")[0]["config"]["samples_per_step"], 64)
        self.assert_steps_well_formed(self.cuda, steps=STEPS, warmup=WARMUP)
        for step in self.cuda.steps[WARMUP:]:
            phases = {i["phase"] for i in step["intervals"]}
            self.assertTrue({"forward", "backward", "optimizer", "h2d"} <= phases, step)
            self.assertTrue(math.isfinite(step["loss"]))
            self.assertEqual(step["tokens"], 0, "samples (a batch of 64 feature vectors), not tokens")
            memory = step["memory"]
            self.assertGreater(memory["allocated_bytes"], 0)
            self.assertGreaterEqual(memory["reserved_bytes"], memory["allocated_bytes"])
            self.assertIn("alloc_retries", memory)

    def test_hello_telemetry_and_knobs_on_the_gpu(self):
        hello = self.cuda.of_type("hello")[0]
        self.assertEqual(hello["device_kind"], "cuda")
        self.assertNotEqual(hello["device"], "cpu")
        self.assertTrue(hello["cuda"] and hello["driver"], hello)
        config = hello["config"]
        self.assertEqual((config["amp"], config["cudnn_benchmark"], config["num_workers"], config["pin_memory"]),
                         ("bf16", True, 2, True))
        self.assertIn("COMPUTE dtype=torch.bfloat16", self.cuda.stdout)
        self.assertIn("LOADER num_workers=2 pin_memory=True", self.cuda.stdout)
        samples = self.cuda.of_type("gpu")
        self.assertTrue(samples)
        self.assertTrue(all(s["index"] == 0 and s["mem_total_bytes"] > 0 and "util_pct" in s for s in samples),
                        samples[:2])

    def test_ddp_buckets_over_nccl(self):
        self.assert_ends_with_done(self.nccl, 0)
        self.assert_steps_well_formed(self.nccl, steps=STEPS, warmup=WARMUP)
        hello = self.nccl.of_type("hello")[0]
        self.assertEqual((hello["backend"], hello["config"]["strategy"]), ("nccl", "ddp"))
        self.assertTrue(hello["nccl"])
        for step in self.nccl.steps:
            reduces = [i for i in step["intervals"] if i["lane"] == "comm"]
            self.assertTrue(reduces, step)
            self.assertTrue(all(i["bytes"] > 0 and i["label"].startswith("bucket ") for i in reduces))

    def test_compile_torch(self):
        if not self.has_compile:
            self.skipTest("this torch has no torch.compile")
        self.assert_ends_with_done(self.compiled, 0)
        self.assert_steps_well_formed(self.compiled, steps=STEPS, warmup=WARMUP)
        self.assertEqual(self.compiled.of_type("hello")[0]["config"]["compile"], "torch")

    def test_sampled_steps_trace_the_devices_kernels(self):
        for result in [self.cuda, self.nccl] + ([self.compiled] if self.compiled else []):
            self.assert_ends_with_done(result, 0)
            self.assertFalse([w for w in result.of_type("warning") if w["kind"] == "kernel-sampling"],
                             result.describe())
            named = {s["step"]: s.get("kernel_trace") for s in result.steps}
            self.assertEqual(sorted(i for i, path in named.items() if path), [2, 3, 6, 7])
            for path in {p for p in named.values() if p}:
                events = json.load(open(path))["traceEvents"]
                # The host's ProfilerStep spans; Kineto adds a gpu_user_annotation of the same name for
                # each span that launched kernels (what the import ignores too).
                steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
                         and e.get("cat") != "gpu_user_annotation"]
                kernels = [e for e in events if e.get("cat") == "kernel"]
                self.assertEqual(len(steps), 2, path)
                self.assertGreater(len(kernels), 10, f"{path}: the device's kernels are in the trace")


if __name__ == "__main__":
    main_or_skip(needs_gpu=True)
