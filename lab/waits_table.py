#!/usr/bin/env python3
"""The table of `scripts/gpu-bench.sh waits` (issue 40), from the raw traces of
lab/make_profiler_traces.py --scenario streams | graph | gloo-delay, read without Tunebench:

  streams     per profiled step, the longest GPU-idle gap (between the union of kernel, memcpy and
              memset intervals) and whether the activity after it was launched before the gap: the
              dependency wait the import must measure, against the injected delay;
  graph       host step times of the profiled and the unprofiled steps (median): how far the
              sampled steps are from the run;
  gloo-delay  per profiled step, each rank's arrival at its all-reduce (the CPU op's start on the
              common clock: baseTimeNanoseconds + ts), the last rank, the other's wait inside the
              collective, against the injected delay.

  python3 lab/waits_table.py OUT/traces
"""
import glob
import gzip
import json
import os
import statistics
import sys


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def steps_of(events):
    return sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                  if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))


def streams(d, meta):
    t = load(glob.glob(os.path.join(d, "rank0*.pt.trace.json.gz"))[0])
    ev = t["traceEvents"]
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    acts = sorted((e["ts"], e["ts"] + e.get("dur", 0), launch.get(e.get("args", {}).get("correlation")))
                  for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    syncs = sum(1 for e in ev if e.get("cat") == "cuda_sync")
    print(f"streams: injected delay {meta['delay_ms']} ms; CUDA sync records in the trace: {syncs}")
    print(f"  {'step':>4} {'longest gap ms':>15} {'queued before it':>17} {'vs delay':>9}")
    for k, (a, b) in enumerate(steps_of(ev)):
        inside = [x for x in acts if a <= x[0] < b]
        best, queued, end = 0.0, False, None
        for s, e, l in inside:
            if end is not None and s - end > best:
                best, queued = s - end, l is not None and l <= end
            end = e if end is None else max(end, e)
        print(f"  {k:>4} {best / 1000:15.3f} {str(queued):>17} {best / 1000 / meta['delay_ms']:9.3f}")


def graph(d, meta):
    ms, flags = meta["host_step_ms"], meta["profiled"]
    p = [m for m, f in zip(ms, flags) if f]
    u = [m for m, f in zip(ms[5:], flags[5:]) if not f]
    print(f"graph: host step, median: profiled {statistics.median(p):.3f} ms ({len(p)} steps), "
          f"unprofiled {statistics.median(u):.3f} ms ({len(u)}); ratio {statistics.median(p) / statistics.median(u):.2f}")


def gloo_delay(d, meta):
    arrivals = {}
    for path in sorted(glob.glob(os.path.join(d, "rank*.pt.trace.json.gz"))):
        t = load(path)
        base = t.get("baseTimeNanoseconds", 0) / 1000.0
        rank = t.get("distributedInfo", {}).get("rank", int(os.path.basename(path)[4]))
        ev = t["traceEvents"]
        ops = sorted((e["ts"], e["dur"]) for e in ev if e.get("cat") == "cpu_op" and e.get("ph") == "X"
                     and any(k in e["name"] for k in ("allreduce", "all_reduce")) and "record_param" not in e["name"])
        per_step = []
        for a, b in steps_of(ev):
            inside = [o for o in ops if a <= o[0] < b]
            if inside:
                per_step.append((base + inside[0][0], inside[0][1]))  # the outermost: first to start
        arrivals[rank] = per_step
    n = min(len(v) for v in arrivals.values())
    print(f"gloo-delay: injected delay {meta['delay_ms']} ms on rank {meta['delayed_rank']}")
    print(f"  {'step':>4} {'rank 1 - rank 0 arrival ms':>27} {'last':>5} {'rank 0 in all-reduce ms':>24} "
          f"{'rank 1 in all-reduce ms':>24} {'wait / delay':>13}")
    for k in range(n):
        a0, d0 = arrivals[0][k]
        a1, d1 = arrivals[1][k]
        last = 1 if a1 > a0 else 0
        wait = abs(a1 - a0) / 1000
        print(f"  {k:>4} {(a1 - a0) / 1000:27.3f} {last:>5} {d0 / 1000:24.3f} {d1 / 1000:24.3f} "
              f"{wait / meta['delay_ms']:13.3f}")


def main():
    root = sys.argv[1]
    for d in sorted(glob.glob(os.path.join(root, "*"))):
        meta_path = os.path.join(d, "meta.json")
        if not os.path.exists(meta_path):
            continue
        meta = json.load(open(meta_path))
        fn = {"streams": streams, "graph": graph, "gloo-delay": gloo_delay}.get(meta.get("scenario"))
        if fn:
            try:
                fn(d, meta)
            except Exception as e:  # one bad recording must not hide the others
                print(f"{os.path.basename(d)}: {e!r}")


if __name__ == "__main__":
    main()
