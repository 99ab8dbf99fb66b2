"""Runs tunebench_probe the way Tunebench does (one process per rank, torchrun's variables, a file:
event channel) and reads back what it wrote. No part of torch is replaced: the probe runs the
real PyTorch installed for this Python (Debian's 1.13 under /usr/bin/python3).

Processes are started together and waited for together, so a test module's runs share the two
cores instead of queueing.
"""
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PROBE_PATH = REPO / "app" / "probe"
SCRIPTS = Path(__file__).resolve().parent / "scripts"
SKIP_EXIT_CODE = 77  # ctest's SKIP_RETURN_CODE in CMakeLists.txt
RANK_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT",
                  "TUNEBENCH_EVENTS", "TUNEBENCH_TRIAL", "TUNEBENCH_EVENT_TOKEN", "TUNEBENCH_PROBE_CONFIG")


def torch_missing_reason():
    if importlib.util.find_spec("torch") is None:
        return f"{sys.executable} cannot import torch: the probe's tests need a real PyTorch"
    return ""


def gpu_missing_reason():
    import torch
    return "" if torch.cuda.is_available() else f"the torch of {sys.executable} sees no GPU"


def main_or_skip(needs_gpu=False):
    """For `python3 test_x.py`: exit with ctest's skip code when torch (or a GPU) is missing."""
    reason = torch_missing_reason() or (gpu_missing_reason() if needs_gpu else "")
    if reason:
        print(f"SKIP: {reason}")
        sys.exit(SKIP_EXIT_CODE)
    unittest.main()


def skip_without_torch():
    reason = torch_missing_reason()
    if reason:
        raise unittest.SkipTest(reason)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_events(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Result:
    def __init__(self, returncode, stdout, stderr, events, wall_s):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.events = events
        self.wall_s = wall_s

    def of_type(self, event_type):
        return [e for e in self.events if e["type"] == event_type]

    @property
    def steps(self):
        return self.of_type("step")

    @property
    def done(self):
        done = self.of_type("done")
        return done[-1] if done else None

    def describe(self):
        return f"exit {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr[-3000:]}"


class ProbeProcess:
    """One rank of a probe run: config (a dict, or None for no --config), script and its arguments."""

    def __init__(self, workdir, name, config, script, script_args=(), rank=0, world_size=1, master_port=0,
                 extra_env=None, probe_args=None, pythonpath=None):
        self.events_path = Path(workdir) / f"{name}.jsonl"
        command = [sys.executable, "-m", "tunebench_probe"]
        if config is not None:
            config_path = Path(workdir) / f"{name}.json"
            config_path.write_text(json.dumps(config))
            command += ["--config", str(config_path)]
        command += probe_args if probe_args is not None else ["--events", f"file:{self.events_path}",
                                                               "--trial", name]
        command += [str(SCRIPTS / script) if not os.path.isabs(script) else script, *script_args]
        env = {k: v for k, v in os.environ.items() if k not in RANK_VARIABLES}
        env["PYTHONPATH"] = pythonpath or str(PROBE_PATH)
        if world_size > 1:
            env.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                       LOCAL_WORLD_SIZE=str(world_size), NODE_RANK="0", MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(master_port), GLOO_SOCKET_IFNAME=env.get("GLOO_SOCKET_IFNAME", "lo"))
        env.update(extra_env or {})
        self._started = time.monotonic()
        self._process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)

    def wait(self, timeout_s=90):
        try:
            stdout, stderr = self._process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._process.kill()
            stdout, stderr = self._process.communicate()
            stderr += f"\n(killed by the test after {timeout_s} s)"
        wall_s = time.monotonic() - self._started
        events = read_events(self.events_path) if self.events_path.exists() else []
        return Result(self._process.returncode, stdout, stderr, events, wall_s)


def run_all(processes, timeout_s=90):
    return [p.wait(timeout_s) for p in processes]


class ProbeTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        skip_without_torch()
        cls._workdir = tempfile.TemporaryDirectory(prefix="tunebench-probe-test-")
        cls.workdir = cls._workdir.name

    @classmethod
    def tearDownClass(cls):
        cls._workdir.cleanup()

    # ---- the protocol's invariants, checked on every run ---------------------------------------

    def assert_ends_with_done(self, result, exit_code):
        self.assertEqual(result.returncode, exit_code, result.describe())
        self.assertEqual(result.events[-1]["type"], "done", result.describe())
        self.assertEqual(result.events[-1]["exit_code"], exit_code)
        for event in result.events:
            self.assertEqual(event["v"], 1)
            for key in ("type", "trial", "rank", "t_us"):
                self.assertIn(key, event)

    def assert_steps_well_formed(self, result, steps, warmup):
        step_events = result.steps
        self.assertEqual([s["step"] for s in step_events], list(range(steps)), result.describe())
        self.assertEqual([s["warmup"] for s in step_events], [i < warmup for i in range(steps)])
        types = [e["type"] for e in result.events]
        self.assertLess(types.index("hello"), types.index("step"), "hello comes before the first step")
        for step in step_events:
            self.assertLessEqual(step["start_us"], step["end_us"])
            self.assertAlmostEqual(step["step_ms"], (step["end_us"] - step["start_us"]) / 1000.0, places=3)
            lanes = {}
            for interval in step["intervals"]:
                self.assertGreaterEqual(interval["start_us"], step["start_us"], interval)
                self.assertLessEqual(interval["end_us"], step["end_us"], interval)
                self.assertLess(interval["start_us"], interval["end_us"], interval)
                lanes.setdefault(interval["lane"], []).append(interval)
            for lane, intervals in lanes.items():
                intervals.sort(key=lambda i: i["start_us"])
                for before, after in zip(intervals, intervals[1:]):
                    self.assertLessEqual(before["end_us"], after["start_us"], f"lane {lane} overlaps in {step}")
            busy_us = sum(i["end_us"] - i["start_us"] for lane in ("host", "compute") for i in lanes.get(lane, []))
            self.assertLessEqual(busy_us, step["end_us"] - step["start_us"], "host + compute phases exceed the step")
        for earlier, later in zip(step_events, step_events[1:]):
            self.assertLessEqual(earlier["end_us"], later["start_us"])

    @staticmethod
    def phase_ms(step, phase):
        return sum(i["end_us"] - i["start_us"] for i in step["intervals"] if i["phase"] == phase) / 1000.0
