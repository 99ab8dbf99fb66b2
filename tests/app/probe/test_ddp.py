"""Two ranks over Gloo, started by the test as Tunebench starts them (torchrun's variables, a free
MASTER_PORT; not torchrun itself): each rank's steps, its DDP buckets' all-reduce intervals with
their bytes, the DDP knobs arriving in DDP, and a script's own communication hook still timed."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import ProbeProcess, ProbeTestCase, free_port, main_or_skip, run_all  # noqa: E402

STEPS, WARMUP, BUCKET_MB = 6, 2, 0.25
PARAMETER_BYTES = 4 * (64 * 512 + 512 + 2 * (512 * 512 + 512) + 512 * 8 + 8)


def two_ranks(workdir, name, config, script_args=()):
    port = free_port()
    return [ProbeProcess(workdir, f"{name}{rank}", config, "train_ddp.py", script_args, rank=rank, world_size=2,
                         master_port=port, probe_args=["--events", f"file:{workdir}/{name}{rank}.jsonl",
                                                       "--trial", name])
            for rank in (0, 1)]


class TwoRanksOverGloo(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        common = {"steps": STEPS, "warmup": WARMUP, "gpu_sample_hz": 0}
        results = run_all(
            two_ranks(cls.workdir, "default_hook", {**common, "script_knobs": ["bucket_mb"], "bucket_mb": BUCKET_MB})
            + two_ranks(cls.workdir, "own_hook", {**common, "script_knobs": ["gradient_as_bucket_view"],
                                                  "gradient_as_bucket_view": True}, ["--own-comm-hook"]),
            timeout_s=120)
        cls.default_hook, cls.own_hook = results[:2], results[2:]

    def check_ranks(self, results):
        for rank, result in enumerate(results):
            self.assert_ends_with_done(result, 0)
            self.assert_steps_well_formed(result, steps=STEPS, warmup=WARMUP)
            self.assertTrue(all(e["rank"] == rank for e in result.events))
            hello = result.of_type("hello")[0]
            self.assertEqual((hello["world_size"], hello["local_rank"], hello["backend"]), (2, rank, "gloo"))
            self.assertEqual((hello["config"]["strategy"], hello["config"]["world_size"]), ("ddp", 2))
            for step in result.steps:
                reduces = [i for i in step["intervals"] if i["lane"] == "comm"]
                self.assertTrue(reduces, step)
                for interval in reduces:
                    self.assertEqual(interval["phase"], "all_reduce")
                    self.assertTrue(interval["label"].startswith("bucket "))
                    self.assertGreaterEqual(interval["busbw_gbps"], 0.0)
                self.assertEqual(sum(i["bytes"] for i in reduces), PARAMETER_BYTES, "every gradient, once")
                self.assertGreater(step["comm_ms"], 0.0)
                self.assertLessEqual(step["exposed_comm_ms"], step["comm_ms"])

    def test_each_rank_reports_its_steps_and_all_reduce_buckets(self):
        self.check_ranks(self.default_hook)
        self.check_ranks(self.own_hook)

    def test_the_probes_all_reduce_averages_as_the_scripts_own(self):
        # The probe's timed all-reduce replaces DDP's: the same steps with the script's own hook
        # (the same average) end with the same parameters, on every rank.
        def parameters(result):
            line = next(l for l in result.stdout.splitlines() if l.startswith("PARAMETERS "))
            return float(line.split("sum=")[1])
        sums = [parameters(r) for r in self.default_hook + self.own_hook]
        for value in sums[1:]:
            self.assertAlmostEqual(value, sums[0], delta=1e-6 * abs(sums[0]) + 1e-9)

    def test_bucket_mb_reaches_ddp(self):
        for rank, result in enumerate(self.default_hook):
            self.assertIn(f"DDP rank={rank} bucket_bytes_cap={int(BUCKET_MB * 1024 * 1024)}", result.stdout)
            config = result.of_type("hello")[0]["config"]
            self.assertEqual((config["bucket_mb"], config["gradient_as_bucket_view"]), (BUCKET_MB, False))
            # 2.2 MiB of gradients: DDP's first bucket holds at most 1 MiB, the others 0.25 MiB
            buckets = [i for i in result.steps[-1]["intervals"] if i["lane"] == "comm"]
            self.assertGreaterEqual(len(buckets), 3, buckets)

    def test_the_scripts_own_comm_hook_runs_and_is_timed(self):
        for rank, result in enumerate(self.own_hook):
            self.assertIn("gradient_as_bucket_view=True", result.stdout)
            self.assertIn(f"HOOK rank={rank} calls=", result.stdout)
            calls = int(result.stdout.split(f"HOOK rank={rank} calls=")[1].split()[0])
            reduces = sum(1 for s in result.steps for i in s["intervals"] if i["lane"] == "comm")
            self.assertEqual(calls, reduces, "each call of the script's hook is one timed bucket")
            self.assertEqual(result.of_type("hello")[0]["config"]["bucket_mb"], 25.0)


if __name__ == "__main__":
    main_or_skip()
