"""How a probed rank fails: each failure ends with an `error` event and `done` with its exit code
(core/protocol/exit_codes.h), the steps finished before it stay sent, and a hung script is ended
by the step timeout."""
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import PROBE_PATH, ProbeProcess, ProbeTestCase, main_or_skip, run_all  # noqa: E402

TIMEOUT_S = 3.0


class ScriptFailures(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        w = cls.workdir
        quiet = {"gpu_sample_hz": 0, "warmup": 1}
        cls.raised, cls.exited, cls.never_stepped, cls.hung = run_all([
            ProbeProcess(w, "raise", {**quiet, "steps": 10}, "fails_at_step.py", ["--how", "raise"]),
            ProbeProcess(w, "exit", {**quiet, "steps": 10}, "fails_at_step.py", ["--how", "exit"]),
            ProbeProcess(w, "never", {**quiet, "steps": 10, "step_timeout_s": TIMEOUT_S}, "manual_sgd.py"),
            ProbeProcess(w, "hang", {**quiet, "steps": 10, "step_timeout_s": TIMEOUT_S}, "fails_at_step.py",
                         ["--how", "hang"]),
        ], timeout_s=60)

    def error_of(self, result):
        errors = result.of_type("error")
        self.assertEqual(len(errors), 1, result.describe())
        self.assertEqual([e["type"] for e in result.events[-2:]], ["error", "done"])
        return errors[0]

    def test_an_exception_is_a_crash_with_its_traceback(self):
        self.assert_ends_with_done(self.raised, 1)
        self.assert_steps_well_formed(self.raised, steps=3, warmup=1)
        error = self.error_of(self.raised)
        self.assertEqual(error["kind"], "crash")
        self.assertEqual(error["message"], "rank 0: the script raised ValueError: the labels are out of range")
        traceback = error["details"]["traceback"]
        self.assertIn("fails_at_step.py", traceback)
        self.assertIn("ValueError: bad batch at step 3", traceback)
        self.assertNotIn("runpy", traceback)
        self.assertLessEqual(len(traceback), 16 * 1024 + 16)
        self.assertIn("the script raised ValueError", self.raised.stderr)

    def test_a_script_exit_code_is_the_rank_exit_code(self):
        self.assert_ends_with_done(self.exited, 3)
        self.assert_steps_well_formed(self.exited, steps=3, warmup=1)
        self.assertEqual(self.error_of(self.exited)["message"], "rank 0: the script exited with code 3")

    def test_no_step_at_all_times_out(self):
        self.assert_ends_with_done(self.never_stepped, 4)
        self.assertEqual(self.never_stepped.steps, [])
        error = self.error_of(self.never_stepped)
        self.assertEqual(error["kind"], "timeout")
        self.assertTrue(error["message"].startswith("no training step seen in 3 s: the script never called an "
                                                    "optimizer's step(); add the marker"), error["message"])
        self.assertEqual(error["details"]["waited_s"], TIMEOUT_S)
        running = [e for e in self.never_stepped.of_type("log") if e["message"].startswith("running the script")]
        self.assertLess((self.never_stepped.done["t_us"] - running[0]["t_us"]) / 1e6, TIMEOUT_S + 3.0)
        self.assertEqual(len(self.never_stepped.of_type("hello")), 1, "the rank still says what it was")

    def test_a_hang_after_some_steps_times_out_and_keeps_them(self):
        self.assert_ends_with_done(self.hung, 4)
        self.assert_steps_well_formed(self.hung, steps=3, warmup=1)
        message = self.error_of(self.hung)["message"]
        self.assertTrue(message.startswith("no training step seen in 3 s after step 2:"), message)
        last_step_end = self.hung.steps[-1]["end_us"]
        self.assertLess((self.hung.done["t_us"] - last_step_end) / 1e6, TIMEOUT_S + 3.0)


class RefusedBeforeRunning(ProbeTestCase):
    """Problems found before the script runs: bad arguments and configs (2), what this torch cannot
    do (5), no torch at all (5), no event channel (6)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        w = cls.workdir
        fake_torch = Path(w) / "no_torch" / "torch"
        fake_torch.mkdir(parents=True)
        (fake_torch / "__init__.py").write_text("raise ImportError('libtorch_cpu.so: cannot open shared object')\n")
        import torch  # what this torch can do decides what the probe must refuse
        cls.has_compile = hasattr(torch, "compile")
        cls.cpu_autocast_fp16 = not torch.__version__.startswith("1.")
        processes = {
            "bad_option": ProbeProcess(w, "bad_option", None, "train_mlp.py",
                                       probe_args=["--events", f"file:{w}/bad_option.jsonl", "--frobnicate"]),
            "no_script": ProbeProcess(w, "no_script", None, "does_not_exist.py"),
            "bad_value": ProbeProcess(w, "bad_value", {"steps": "ten", "script_knobs": ["num_workers", "dim"],
                                                       "num_workers": -1}, "train_mlp.py"),
            "no_channel": ProbeProcess(w, "no_channel", None, "train_mlp.py",
                                       probe_args=["--events", f"unix:{w}/nobody/listens.sock"]),
            "compile": ProbeProcess(w, "compile", {"script_knobs": ["compile"], "compile": "torch"}, "train_mlp.py"),
            "fp16": ProbeProcess(w, "fp16", {"script_knobs": ["amp"], "amp": "fp16"}, "train_mlp.py"),
            "no_torch": ProbeProcess(w, "no_torch", None, "train_mlp.py",
                                     pythonpath=f"{fake_torch.parent}{os.pathsep}{PROBE_PATH}"),
        }
        cls.results = dict(zip(processes, run_all(processes.values(), timeout_s=60)))

    def error_of(self, name, exit_code, kind):
        result = self.results[name]
        self.assert_ends_with_done(result, exit_code)
        self.assertEqual(result.steps, [])
        error = result.of_type("error")[0]
        self.assertEqual(error["kind"], kind)
        self.assertIn(error["message"], result.stderr, "the reason is on stderr too")
        return error

    def test_bad_arguments_and_configs_are_config_errors(self):
        self.assertIn("unknown option --frobnicate", self.error_of("bad_option", 2, "config")["message"])
        self.assertIn("does_not_exist.py does not exist", self.error_of("no_script", 2, "config")["message"])
        error = self.error_of("bad_value", 2, "config")
        self.assertEqual({p["key"] for p in error["details"]["problems"]}, {"steps", "script_knobs", "num_workers"})
        for name in ("bad_option", "no_script", "bad_value"):
            self.assertLess(self.results[name].wall_s, 10.0, "refused before torch is imported")

    def test_no_event_channel_is_exit_6_on_stderr(self):
        result = self.results["no_channel"]
        self.assertEqual(result.returncode, 6, result.describe())
        self.assertIn("cannot open the event channel unix:", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_what_this_torch_cannot_do_is_refused(self):
        if self.has_compile:
            self.skipTest("this torch has torch.compile")
        self.assertIn("torch.compile", self.error_of("compile", 5, "unsupported")["message"])

    def test_fp16_autocast_on_a_cpu_that_lacks_it_is_refused(self):
        if self.cpu_autocast_fp16:
            self.skipTest("this torch autocasts to fp16 on the CPU")
        self.assertIn("amp fp16", self.error_of("fp16", 5, "unsupported")["message"])

    def test_a_python_without_torch_is_unsupported(self):
        message = self.error_of("no_torch", 5, "unsupported")["message"]
        self.assertTrue(message.startswith(f"this Python ({sys.executable}, "), message)
        self.assertIn("cannot import torch: libtorch_cpu.so", message)


if __name__ == "__main__":
    main_or_skip()
