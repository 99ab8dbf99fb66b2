"""Predicted against measured step time, phases and peak memory of the recorded model shapes.

    python3 lab/models_predict_table.py [CLI] [LOG_DIR] [EVIDENCE]

Defaults: build/app/cli/tunebench-cli, tests/data/models-h200 (scripts/gpu-bench.sh models-check,
TUNEBENCH_MEMORY_PHASES=1), sessions/h200-7b.tbsession. For each log: its configuration (the
hello's), the median measured step and phases (forward, backward, optimizer, ms) and the allocator's
peak (the largest phase peak the worker logged, GiB), against `tunebench-cli predict --config C
--gpu h200 --evidence EVIDENCE --json`. tests/core/predict/recorded_models_test.cpp asserts on the
same numbers."""
import glob, json, os, statistics, subprocess, sys, tempfile

from models_check_table import logged_peak

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/app/cli/tunebench-cli")
LOGS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests/data/models-h200")
EVIDENCE = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "sessions/h200-7b.tbsession")


def measured(path):
    events = [json.loads(l) for l in open(path)]
    config = next(e["config"] for e in events if e["type"] == "hello")
    steps = [e for e in events if e["type"] == "step" and not e.get("warmup")]
    phases = {}
    for s in steps:
        for i in s["intervals"]:
            if i["lane"] == "compute":
                d = phases.setdefault(i["phase"], {})
                d[s["step"]] = d.get(s["step"], 0) + (i["end_us"] - i["start_us"]) / 1000
    peak = logged_peak(events)
    med = {k: statistics.median(v.values()) for k, v in phases.items()}
    return config, statistics.median(s["step_ms"] for s in steps), med, peak


def main():
    print("%-18s %7s %7s %6s | %5s %5s %5s | %5s %5s %5s | %6s %6s %6s" % (
        "row", "meas", "pred", "err", "fwd", "bwd", "opt", "pfwd", "pbwd", "popt", "peak", "pmem", "merr"))
    for path in sorted(glob.glob(os.path.join(LOGS, "*.jsonl"))):
        config, step, ph, peak = measured(path)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(config, f)
        out = subprocess.run([CLI, "predict", "--config", f.name, "--gpu", "h200", "--evidence", EVIDENCE, "--json"],
                             capture_output=True, text=True, check=True)
        os.unlink(f.name)
        d = json.loads(out.stdout)
        s, mem = d["step"], d["memory"]["peak_bytes"]
        print("%-18s %7.2f %7.2f %+5.1f%% | %5.2f %5.2f %5.2f | %5.2f %5.2f %5.2f | %6.2f %6.2f %+5.1f%%" % (
            os.path.basename(path)[:-6], step, s["step_ms"], 100 * (s["step_ms"] - step) / step,
            ph.get("forward", 0), ph.get("backward", 0), ph.get("optimizer", 0),
            s["forward_ms"], s["backward_ms"], s["optimizer_ms"], peak / 2**30, mem / 2**30, 100 * (mem - peak) / peak))


if __name__ == "__main__":
    main()
