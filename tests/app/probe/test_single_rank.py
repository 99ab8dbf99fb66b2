"""One rank on the CPU: steps, phases, the hello config, the model, telemetry, data wait and the
knobs that reach the DataLoader, with real PyTorch running the scripts under scripts/."""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import ProbeProcess, ProbeTestCase, main_or_skip, run_all  # noqa: E402

MLP_PARAMETERS = 32 * 64 + 64 + 64 * 4 + 4


class SingleRankRuns(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        w = cls.workdir
        cls.mlp, cls.lm, cls.marker, cls.early, cls.annotated = run_all([
            # 6 steps of at least 15 ms: long enough for a few telemetry samples at 50 Hz
            ProbeProcess(w, "mlp", {"steps": 6, "warmup": 2, "gpu_sample_hz": 50, "script_knobs": [],
                                    "script": "my/train.py", "name": "not a known key", "amp": "bf16"},
                         "train_mlp.py", ["--forward-sleep-ms", "15"]),
            ProbeProcess(w, "lm", {"steps": 5, "warmup": 1, "gpu_sample_hz": 0}, "train_lm.py"),
            ProbeProcess(w, "marker", {"steps": 5, "warmup": 1, "gpu_sample_hz": 0}, "manual_sgd.py", ["--marker"]),
            ProbeProcess(w, "early", {"steps": 6, "warmup": 1, "gpu_sample_hz": 0}, "train_mlp.py",
                         ["--stop-after-steps", "3"]),
            ProbeProcess(w, "annotated", {"steps": 4, "warmup": 1, "gpu_sample_hz": 0}, "train_mlp.py",
                         ["--slow-step-annotation-ms", "40"]),
        ])

    def test_exactly_the_asked_steps_then_the_script_is_stopped(self):
        self.assert_ends_with_done(self.mlp, 0)
        self.assert_steps_well_formed(self.mlp, steps=6, warmup=2)
        self.assertIn("LOADER num_workers=0", self.mlp.stdout)
        self.assertNotIn("TRAINING LOOP ENDED", self.mlp.stdout, "the probe ends the script after its steps")
        self.assertEqual(self.mlp.events[0]["type"], "log")
        self.assertIn("probe started:", self.mlp.events[0]["message"])
        self.assertTrue(all(e["trial"] == "mlp" and e["rank"] == 0 for e in self.mlp.events))

    def test_every_step_has_its_phases_tokens_loss_and_memory(self):
        for step in self.mlp.steps:
            phases = {i["phase"] for i in step["intervals"]}
            self.assertTrue({"data_wait", "forward", "backward", "optimizer"} <= phases, step)
            self.assertEqual(step["tokens"], 0, "an MLP's batches are samples, not tokens")
            self.assertTrue(math.isfinite(step["loss"]))
            self.assertGreater(step["memory"]["allocated_bytes"], 0)
            self.assertGreaterEqual(step["memory"]["peak_bytes"], step["memory"]["allocated_bytes"])
            self.assertEqual(step["comm_ms"], 0.0)
            self.assertGreater(self.phase_ms(step, "data_wait"), 0.8 * 8 * 0.2, "8 samples x 200 us of CPU work")

    def test_hello_keeps_only_known_settings(self):
        hello = self.mlp.of_type("hello")[0]
        self.assertEqual((hello["device_kind"], hello["device"], hello["backend"]), ("cpu", "cpu", "none"))
        self.assertEqual((hello["world_size"], hello["local_rank"], hello["clock_offset_us"]), (1, 0, 0))
        self.assertGreater(hello["device_memory_bytes"], 0)
        config = hello["config"]
        self.assertEqual(config["script"], "my/train.py", "script as the config gave it")
        self.assertEqual(config["script_args"], "--forward-sleep-ms 15", "what ran, when the config has none")
        self.assertEqual(config["python"], sys.executable)
        self.assertEqual(config["script_knobs"], [])
        for key, value in {"steps": 6, "warmup": 2, "gpu_sample_hz": 50, "step_timeout_s": 300, "num_workers": 0,
                           "pin_memory": False, "prefetch_factor": 0, "persistent_workers": False,
                           "strategy": "single", "world_size": 1, "script_batch_unit": "samples", "micro_batch": 8,
                           "samples_per_step": 8,
                           "cudnn_benchmark": False}.items():
            self.assertEqual(config[key], value, key)
        for unknown in ("name", "amp", "bucket_mb", "seq_len", "compile", "dim"):
            self.assertNotIn(unknown, config, "neither applied nor observed")

    def test_model_and_done_summary(self):
        model = self.mlp.of_type("model")[0]
        self.assertEqual(model["parameters"], MLP_PARAMETERS)
        self.assertEqual(model["parameter_bytes"], 4 * MLP_PARAMETERS)
        summary = self.mlp.done["summary"]
        measured = [s for s in self.mlp.steps if not s["warmup"]]
        self.assertEqual(summary["measured_steps"], 4)
        self.assertAlmostEqual(summary["step_ms_median"], statistics.median(s["step_ms"] for s in measured), places=6)
        self.assertEqual(summary["tokens_per_s"], 0.0, "samples, not tokens: the trial's samples/s is the analysis'")
        self.assertEqual(summary["final_loss"], measured[-1]["loss"])
        self.assertEqual(summary["mfu"], -1.0)
        self.assertGreater(summary["peak_bytes"], 0)

    def test_cpu_telemetry(self):
        samples = self.mlp.of_type("gpu")
        self.assertGreaterEqual(len(samples), 3)
        self.assertTrue(all(s["index"] == -1 and s["rss_bytes"] > 0 for s in samples))
        self.assertTrue(any("cpu_pct" in s for s in samples))
        types = [e["type"] for e in self.mlp.events]
        self.assertEqual(types.count("done"), 1)

    def test_two_optimizers_of_one_iteration_are_one_step_and_tokens_count_the_batch(self):
        self.assert_ends_with_done(self.lm, 0)
        self.assert_steps_well_formed(self.lm, steps=5, warmup=1)
        for step in self.lm.steps:
            self.assertEqual([i["phase"] for i in step["intervals"]].count("optimizer"), 2, step)
            self.assertEqual(step["tokens"], 4 * 17, "the batch as the loader yields it: 16 inputs + 1 target")
        config = self.lm.of_type("hello")[0]["config"]
        self.assertEqual((config["script_batch_unit"], config["micro_batch"], config["seq_len"]), ("tokens", 4, 17))
        self.assertTrue(config["script"].endswith("train_lm.py"), "the script that ran, when the config has none")

    def test_the_marker_delimits_steps_without_an_optimizer(self):
        self.assert_ends_with_done(self.marker, 0)
        self.assert_steps_well_formed(self.marker, steps=5, warmup=1)
        self.assertNotIn("LOOP ENDED", self.marker.stdout)
        for step in self.marker.steps:
            self.assertNotIn("optimizer", {i["phase"] for i in step["intervals"]})
            self.assertIn("backward", {i["phase"] for i in step["intervals"]})

    def test_the_optimizer_phase_is_the_whole_step_call_torch_wraps_included(self):
        # torch wraps a class's step on its first construction (the profiler's annotation, step
        # hooks); that time is the script's opt.step() and a torch.profiler trace counts it.
        self.assert_ends_with_done(self.annotated, 0)
        self.assert_steps_well_formed(self.annotated, steps=4, warmup=1)
        for step in self.annotated.steps:
            self.assertGreaterEqual(self.phase_ms(step, "optimizer"), 40.0, step)

    def test_a_script_that_ends_early_finishes_with_a_warning(self):
        self.assert_ends_with_done(self.early, 0)
        self.assert_steps_well_formed(self.early, steps=3, warmup=1)
        self.assertIn("TRAINING LOOP ENDED", self.early.stdout)
        warnings = [w["message"] for w in self.early.of_type("warning")]
        self.assertIn("the script ended after 3 of 6 steps", warnings)


class DataLoaderKnobs(ProbeTestCase):
    """A loader that sleeps 20 ms per batch in front of a 15 ms forward: in the main process every
    step waits the 20 ms; two workers applied by the probe hide most of it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        slow_data = ["--batch-sleep-ms", "20", "--forward-sleep-ms", "15", "--sample-cpu-us", "0"]
        common = {"steps": 10, "warmup": 4, "gpu_sample_hz": 0}
        cls.main_process, cls.workers = run_all([
            ProbeProcess(cls.workdir, "workers0", {**common, "script_knobs": ["num_workers"], "num_workers": 0},
                         "train_mlp.py", slow_data + ["--num-workers", "2"]),
            ProbeProcess(cls.workdir, "workers2", {**common, "script_knobs": ["num_workers", "pin_memory",
                                                                              "prefetch_factor"],
                                                   "num_workers": 2, "pin_memory": True, "prefetch_factor": 4},
                         "train_mlp.py", slow_data),
        ])

    def test_the_knobs_reach_the_dataloader(self):
        self.assert_ends_with_done(self.main_process, 0)
        self.assert_ends_with_done(self.workers, 0)
        self.assertIn("LOADER num_workers=0 pin_memory=False", self.main_process.stdout)
        self.assertIn("LOADER num_workers=2 pin_memory=True", self.workers.stdout)
        config = self.workers.of_type("hello")[0]["config"]
        self.assertEqual((config["num_workers"], config["pin_memory"], config["prefetch_factor"]), (2, True, 4))
        self.assertEqual(config["script_knobs"], ["num_workers", "pin_memory", "prefetch_factor"])

    def test_data_wait_is_what_the_loop_waited(self):
        self.assert_steps_well_formed(self.main_process, steps=10, warmup=4)
        self.assert_steps_well_formed(self.workers, steps=10, warmup=4)
        waited = [self.phase_ms(s, "data_wait") for s in self.main_process.steps if not s["warmup"]]
        hidden = [self.phase_ms(s, "data_wait") for s in self.workers.steps if not s["warmup"]]
        self.assertGreaterEqual(statistics.median(waited), 15.0, waited)
        self.assertLess(statistics.median(hidden), min(8.0, statistics.median(waited) / 2), hidden)
        self.assertAlmostEqual(self.main_process.done["summary"]["data_wait_ms_median"], statistics.median(waited),
                               places=3)


if __name__ == "__main__":
    main_or_skip()
