"""The knobs as the script's own torch objects hold them, on the CPU: static_graph and bucket_mb in
the DistributedDataParallel the script built (two ranks over Gloo), persistent_workers in its
DataLoader, cudnn.benchmark and the TF32 switches of `amp` inside its forward (applied before it
starts, and put back after the script changed them), bf16 autocast around its forward, and the
NCCL_* variables in its environment. scripts/report_knobs.py writes what it sees to a JSON report;
the probe's own hello config is checked against that, never taken as the evidence. Also: two
ranks where rank 1 raises, and a dense loop whose phases cover its steps."""
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import ProbeProcess, ProbeTestCase, free_port, main_or_skip, run_all  # noqa: E402

BUCKET_MB = 0.5
# As the launcher passes a trial's nccl_env: plain variables of each rank's environment
# (core/launch/launch_plan.cpp, local_rank_env).
NCCL_ENV = {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "lo", "NCCL_BUFFSIZE": "2097152"}
FAIL_TIMEOUT_S = 20.0


def two_ranks(workdir, name, config, script_args=(), extra_env=None):
    port = free_port()
    return [ProbeProcess(workdir, f"{name}{rank}", config, "report_knobs.py",
                         ["--ddp", "--report", f"{workdir}/{name}{rank}.report.json", *script_args], rank=rank,
                         world_size=2, master_port=port, extra_env=extra_env,
                         probe_args=["--events", f"file:{workdir}/{name}{rank}.jsonl", "--trial", name])
            for rank in (0, 1)]


def one_rank(workdir, name, config, script_args=()):
    return ProbeProcess(workdir, name, config, "report_knobs.py",
                        ["--report", f"{workdir}/{name}.report.json", *script_args])


class KnobsAsTheScriptSeesThem(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        w = cls.workdir
        common = {"steps": 4, "warmup": 1, "gpu_sample_hz": 0}
        meddle = ["--meddle-at-step", "1"]  # the script flips the switches itself after step 1
        processes = (
            two_ranks(w, "ddp", {**common, "script_knobs": ["static_graph", "bucket_mb"], "static_graph": True,
                                 "bucket_mb": BUCKET_MB}, extra_env=NCCL_ENV)
            # no knobs: DDP as the script builds it; rank 1 raises before its step 2
            + two_ranks(w, "fail", {**common, "steps": 6, "step_timeout_s": FAIL_TIMEOUT_S},
                        ["--raise-on-rank", "1", "--raise-at-step", "2"])
            + [one_rank(w, "bf16", {**common, "script_knobs": ["amp", "cudnn_benchmark", "persistent_workers"],
                                    "amp": "bf16", "cudnn_benchmark": True, "persistent_workers": True},
                        ["--num-workers", "1", *meddle]),
               one_rank(w, "tf32", {**common, "script_knobs": ["amp"], "amp": "tf32"}, meddle),
               one_rank(w, "fp32", {**common, "script_knobs": ["amp", "cudnn_benchmark"], "amp": "fp32",
                                    "cudnn_benchmark": False}, ["--num-workers", "1", *meddle])])
        names = ["ddp0", "ddp1", "fail0", "fail1", "bf16", "tf32", "fp32"]
        cls.results = dict(zip(names, run_all(processes, timeout_s=90)))
        cls.reports = {}
        for name in names:
            path = Path(w) / f"{name}.report.json"
            cls.reports[name] = json.loads(path.read_text()) if path.exists() else None

    def report(self, name):
        report = self.reports[name]
        self.assertIsNotNone(report, f"{name} wrote no report:\n{self.results[name].describe()}")
        return report

    def finished(self, name):
        result = self.results[name]
        self.assert_ends_with_done(result, 0)
        self.assert_steps_well_formed(result, steps=4, warmup=1)
        return self.report(name)

    def hello_config(self, name):
        return self.results[name].of_type("hello")[0]["config"]

    # ---- DDP ------------------------------------------------------------------------------------

    def test_static_graph_reaches_ddp(self):
        for rank in (0, 1):
            ddp = self.finished(f"ddp{rank}")["ddp"]
            self.assertIs(ddp["static_graph"], True, "DistributedDataParallel.static_graph")
            self.assertEqual(ddp["logged_static_graph"], 1, "the reducer's setting, as DDP's logging data has it")
            self.assertIs(self.hello_config(f"ddp{rank}")["static_graph"], True)
        # without the knob the same script's DDP has no static graph
        self.assertIs(self.report("fail1")["ddp"]["static_graph"], False)
        self.assertEqual(self.report("fail1")["ddp"]["logged_static_graph"], 0)

    def test_hello_has_the_bucket_size_ddp_holds(self):
        for rank in (0, 1):
            ddp = self.finished(f"ddp{rank}")["ddp"]
            config = self.hello_config(f"ddp{rank}")
            # first what hello says against what DDP holds: a knob that did not reach DDP shows there
            self.assertEqual(config["bucket_mb"], ddp["bucket_bytes_cap"] / 2 ** 20, "hello reports what DDP holds")
            self.assertEqual(config["gradient_as_bucket_view"], ddp["gradient_as_bucket_view"])
            self.assertEqual(ddp["bucket_bytes_cap"], int(BUCKET_MB * 1024 * 1024), "bucket_mb reached DDP")
        self.assertEqual(self.report("fail1")["ddp"]["bucket_bytes_cap"], 25 * 2 ** 20, "DDP's default, no knob")
        self.assertEqual(self.hello_config("fail1")["bucket_mb"], 25.0)

    def test_nccl_variables_reach_the_script_and_hello(self):
        for rank in (0, 1):
            seen = self.finished(f"ddp{rank}")["env"]
            self.assertEqual({k: seen.get(k) for k in NCCL_ENV}, NCCL_ENV, "the script's os.environ")
            hello = self.results[f"ddp{rank}"].of_type("hello")[0]
            self.assertEqual(hello["env"], seen, "hello.env: the NCCL_*/TORCH_NCCL_* variables the rank ran with")

    def test_rank_1_raising_ends_both_ranks(self):
        crashed, peer = self.results["fail1"], self.results["fail0"]
        self.assert_ends_with_done(crashed, 1)
        self.assert_steps_well_formed(crashed, steps=2, warmup=1)
        self.assertEqual([e["type"] for e in crashed.events[-2:]], ["error", "done"])
        error = crashed.of_type("error")[0]
        self.assertEqual(error["kind"], "crash")
        self.assertEqual(error["message"], "rank 1: the script raised ValueError: the shard file is truncated")
        self.assertTrue(all(e["rank"] == 1 for e in crashed.events))
        self.assertIn("report_knobs.py", error["details"]["traceback"])
        self.assertIn("ValueError: rank 1 read a bad shard at step 2", error["details"]["traceback"])
        self.assertIn(error["message"], crashed.stderr)
        # rank 0 waits in the step's all-reduce for rank 1: Gloo's closed connection ends it, long
        # before its step timeout would
        self.assert_ends_with_done(peer, 4)
        self.assert_steps_well_formed(peer, steps=2, warmup=1)
        self.assertEqual([e["type"] for e in peer.events[-2:]], ["error", "done"])
        peer_error = peer.of_type("error")[0]
        self.assertEqual(peer_error["kind"], "comm", peer_error)
        self.assertTrue(peer_error["message"].startswith("rank 0: the script raised RuntimeError"), peer_error)
        # Gloo's words, not the "At:" frame list torch appends after the probe's all-reduce callback
        self.assertIn("by peer", peer_error["message"])
        self.assertNotIn("tunebench_probe", peer_error["message"])
        after_s = (peer.done["t_us"] - crashed.done["t_us"]) / 1e6
        self.assertLess(after_s, FAIL_TIMEOUT_S / 2, "rank 0 ended soon after rank 1")

    # ---- DataLoader -----------------------------------------------------------------------------

    def test_persistent_workers_reach_the_dataloader(self):
        loader = self.finished("bf16")["loader"]
        self.assertEqual((loader["num_workers"], loader["persistent_workers"]), (1, True))
        self.assertIs(self.hello_config("bf16")["persistent_workers"], True)
        # without the knob the same DataLoader has none
        self.assertEqual(self.finished("fp32")["loader"], {"num_workers": 1, "persistent_workers": False})

    # ---- process-wide switches and autocast -----------------------------------------------------

    def check_switches(self, name, wanted):
        report = self.finished(name)
        for key, value in wanted.items():
            self.assertIs(report["at_start"][key], value, f"{name}: {key} applied before the script's first line")
            self.assertIs(report["meddled"][key], not value, f"{name}: the script changed {key}")
            self.assertEqual([f[key] for f in report["forward"]], [value] * 4, f"{name}: {key} in every forward")
        return report

    def test_cudnn_benchmark_is_applied_and_put_back(self):
        self.check_switches("bf16", {"cudnn_benchmark": True})
        self.check_switches("fp32", {"cudnn_benchmark": False})
        warnings = [e["message"] for e in self.results["bf16"].of_type("warning") if e["kind"] == "knob"]
        self.assertIn("the script set torch.backends.cudnn.benchmark; the probe keeps it True as the trial asks",
                      warnings)

    def test_amp_tf32_and_fp32_set_the_tf32_switches(self):
        self.check_switches("tf32", {"matmul_allow_tf32": True, "cudnn_allow_tf32": True})
        self.check_switches("fp32", {"matmul_allow_tf32": False, "cudnn_allow_tf32": False})
        # amp bf16 holds no TF32 switch: the script's own change stands from the next forward on
        bf16 = self.finished("bf16")
        self.assertEqual([f["matmul_allow_tf32"] for f in bf16["forward"]],
                         [bf16["at_start"]["matmul_allow_tf32"]] * 2 + [bf16["meddled"]["matmul_allow_tf32"]] * 2)

    def test_amp_bf16_autocasts_the_forward(self):
        self.assertEqual(self.finished("bf16")["output_dtypes"], ["bfloat16"] * 4)
        self.assertEqual(self.finished("fp32")["output_dtypes"], ["float32"] * 4)
        self.assertEqual(self.finished("tf32")["output_dtypes"], ["float32"] * 4)


class PhasesCoverTheStep(ProbeTestCase):
    """A loop that is all forward, backward and optimizer work: the phases measured add up to most
    of each step (assert_steps_well_formed checks they do not exceed it). Run alone, after the
    other class's seven processes, so that its steps share the two cores with nothing of ours."""

    # Measured on this shared 2-core machine (width 1024, batch 256, SGD with momentum): 14 runs, 6
    # of them beside two busy loops. Steps of 20-163 ms; the median step's coverage 0.970-0.995,
    # the lowest single step 0.930; of a step, forward 0.31-0.47, backward 0.49-0.58, optimizer
    # 0.01-0.09, data_wait 0.01-0.06. With the forward phase not recorded the median fell to
    # 0.63-0.79 (once above 0.8), with the backward not recorded to 0.43-0.52: 0.9 keeps 0.07 of
    # margin below the lowest median measured and still fails when either goes unmeasured.
    MIN_COVERAGE = 0.9

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dense, = run_all([ProbeProcess(cls.workdir, "dense", {"steps": 12, "warmup": 2, "gpu_sample_hz": 0},
                                           "train_dense.py", ["--width", "1024", "--batch-size", "256"])])

    def test_measured_phases_cover_most_of_each_step(self):
        self.assert_ends_with_done(self.dense, 0)
        self.assert_steps_well_formed(self.dense, steps=12, warmup=2)
        measured = [s for s in self.dense.steps if not s["warmup"]]
        coverage = [sum(i["end_us"] - i["start_us"] for i in s["intervals"] if i["lane"] in ("host", "compute"))
                    / (s["end_us"] - s["start_us"]) for s in measured]
        self.assertGreaterEqual(statistics.median(coverage), self.MIN_COVERAGE,
                                f"phases / step per measured step: {[round(c, 3) for c in coverage]}")
        for step in measured:
            self.assertTrue({"data_wait", "forward", "backward", "optimizer"} <= {i["phase"] for i in step["intervals"]},
                            step)


if __name__ == "__main__":
    main_or_skip()
