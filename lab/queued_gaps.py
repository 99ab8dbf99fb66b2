#!/usr/bin/env python3
"""Gaps between already-launched GPU activities in torch.profiler traces: the launch latency.

For each trace: the GPU-idle gaps (between the union of kernel, memcpy and memset intervals) whose
next activity was launched (its cuda_runtime/cuda_driver call with the same correlation id) before
the gap began, i.e. queued work the device started after a gap. Prints their count, median, 99th
percentile and maximum in microseconds, and the count above a threshold. The figures behind
metrics::kLaunchLatencyUs (docs/ANALYSIS.md, "GPU busy and GPU idle").

  python3 lab/queued_gaps.py tests/data/traces/*/*.pt.trace.json.gz [--threshold-us 50]
"""
import argparse
import gzip
import json


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def queued_gaps_us(trace):
    events = trace["traceEvents"]
    launch = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch[e["args"]["correlation"]] = e["ts"]
    acts = sorted((e["ts"], e["ts"] + e.get("dur", 0), launch.get(e.get("args", {}).get("correlation")))
                  for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    gaps, end = [], None
    for start, stop, launched in acts:
        if end is not None and start > end and launched is not None and launched <= end:
            gaps.append(start - end)
        end = stop if end is None else max(end, stop)
    return sorted(gaps)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--threshold-us", type=float, default=50.0)
    a = ap.parse_args()
    print(f"{'trace':60} {'gaps':>6} {'median':>8} {'p99':>8} {'max':>8} {'>thr':>5}")
    for path in a.traces:
        g = queued_gaps_us(load(path))
        if not g:
            print(f"{path:60} {0:>6}")
            continue
        q = lambda p: g[min(len(g) - 1, int(p * len(g)))]
        print(f"{path[-60:]:60} {len(g):>6} {q(0.5):8.2f} {q(0.99):8.2f} {g[-1]:8.2f} "
              f"{sum(x > a.threshold_us for x in g):>5}")


if __name__ == "__main__":
    main()
