"""Kernel-sampled steps on the CPU (kernel_sampler.py, docs/SCRIPTS.md "Kernel-sampled steps"), with
real PyTorch: torch.profiler records during exactly the sampled steps of the worker's schedule and
at no other time (the script itself asks PyTorch whether a profiler is on), each window of sampled
steps leaves one trace with a ProfilerStep#N per step, the step events name it, and the steps
after a window start once the profiler has stopped. Reading the trace is Tunebench's (core/launch
kernel_traces, tests/core/launch/kernel_traces_test.cpp; end to end in tests/app/cli/cli_script_test.sh)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import ProbeProcess, ProbeTestCase, main_or_skip, run_all  # noqa: E402

STEPS, WARMUP, EVERY, COUNT = 9, 1, 3, 2
SAMPLED = [1, 2, 4, 5, 7, 8]  # TrialConfig::kernel_sampled(i): i >= warmup and (i - warmup) % every < count


def profiler_states(stdout):
    """{step: whether a profiler recorded in it}, from the script's own PROFILER lines."""
    states = {}
    for line in stdout.splitlines():
        if line.startswith("PROFILER "):
            fields = dict(word.split("=") for word in line.split()[1:])
            states[int(fields["step"])] = fields["on"] == "True"
    return states


class KernelSampling(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        w = cls.workdir
        cls.traces = os.path.join(w, "traces")
        base = {"steps": STEPS, "warmup": WARMUP, "gpu_sample_hz": 0}
        cls.sampled, cls.off, cls.bad, cls.own = run_all([
            ProbeProcess(w, "sampled", dict(base, kernel_sample_every=EVERY, kernel_sample_steps=COUNT),
                         "train_mlp.py", ["--report-profiler", "--sample-cpu-us", "0"],
                         probe_args=["--events", f"file:{w}/sampled.jsonl", "--trace-dir", cls.traces]),
            ProbeProcess(w, "off", dict(base, kernel_sample_every=0), "train_mlp.py",
                         ["--report-profiler", "--sample-cpu-us", "0"]),
            ProbeProcess(w, "bad", dict(base, kernel_sample_every=2, kernel_sample_steps=3), "train_mlp.py"),
            # The script starts its own profiler in step 2, inside the probe's window of steps 1-2.
            ProbeProcess(w, "own", dict(base, kernel_sample_every=EVERY, kernel_sample_steps=COUNT), "train_mlp.py",
                         ["--own-profiler-at", "2", "--sample-cpu-us", "0"]),
        ])

    def test_the_profiler_records_during_the_sampled_steps_only(self):
        self.assert_ends_with_done(self.sampled, 0)
        self.assert_steps_well_formed(self.sampled, steps=STEPS, warmup=WARMUP)
        states = profiler_states(self.sampled.stdout)
        self.assertEqual(sorted(states), list(range(STEPS)), self.sampled.describe())
        self.assertEqual([i for i in range(STEPS) if states[i]], SAMPLED, "the profiler is on in exactly these steps")

    def test_each_window_is_one_trace_named_by_its_steps(self):
        named = {s["step"]: s.get("kernel_trace") for s in self.sampled.steps}
        self.assertEqual(sorted(i for i, path in named.items() if path), SAMPLED)
        windows = {}
        for index, path in named.items():
            if path:
                windows.setdefault(path, []).append(index)
        self.assertEqual(sorted(windows.values()), [[1, 2], [4, 5], [7, 8]])
        for path, indices in windows.items():
            self.assertEqual(os.path.dirname(path), self.traces, "the trace goes to --trace-dir")
            self.assertEqual(os.path.basename(path), f"rank0-steps{indices[0]}-{indices[-1]}.pt.trace.json")
            with open(path, encoding="utf-8") as f:
                trace = json.load(f)
            self.assertIsInstance(trace, dict, "a torch.profiler trace object, as the import reads")
            markers = sorted(e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
            self.assertEqual(markers, [f"ProfilerStep#{i}" for i in indices])
            names = {e.get("name") for e in trace["traceEvents"]}
            self.assertIn("aten::addmm", names, "the steps' own ops are in the trace")

    def test_the_profilers_start_and_stop_are_outside_the_steps(self):
        steps = self.sampled.steps
        for before, after in zip(steps, steps[1:]):
            starts_window = after["step"] in SAMPLED and before["step"] not in SAMPLED
            ends_window = before["step"] in SAMPLED and after["step"] not in SAMPLED
            if starts_window or ends_window:
                self.assertGreater(after["start_us"], before["end_us"],
                                   f"step {after['step']} starts after the profiler's start or stop")
            else:
                self.assertEqual(after["start_us"], before["end_us"])

    def test_the_schedule_is_in_the_hello_and_zero_turns_it_off(self):
        config = self.sampled.of_type("hello")[0]["config"]
        self.assertEqual((config["kernel_sample_every"], config["kernel_sample_steps"]), (EVERY, COUNT))
        self.assert_ends_with_done(self.off, 0)
        self.assertEqual(set(profiler_states(self.off.stdout).values()), {False}, self.off.describe())
        self.assertFalse(any("kernel_trace" in s for s in self.off.steps))

    def test_more_sampled_steps_than_the_period_is_a_config_error(self):
        self.assert_ends_with_done(self.bad, 2)
        error = self.bad.of_type("error")[0]
        self.assertEqual(error["kind"], "config")
        self.assertIn("kernel_sample_steps: kernel-sampled steps must be between 0 and the sampling period (2), got 3",
                      error["message"])

    def test_a_script_that_profiles_itself_wins_and_sampling_stops(self):
        self.assert_ends_with_done(self.own, 0)
        self.assert_steps_well_formed(self.own, steps=STEPS, warmup=WARMUP)
        self.assertFalse([s["step"] for s in self.own.steps if "kernel_trace" in s], "no step sampled")
        warnings = [w["message"] for w in self.own.of_type("warning") if w["kind"] == "kernel-sampling"]
        self.assertEqual(len(warnings), 1, self.own.describe())
        self.assertIn("the script starts a torch profiler of its own: kernel sampling is off for the rest of the run "
                      "(steps 1-2 dropped from the sample)", warnings[0])


if __name__ == "__main__":
    main_or_skip()
