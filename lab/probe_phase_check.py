"""The probe's phases against torch.profiler's kernels for the same steps (issue 39): reads the
events and the trace lab/probe_gpu_check.py recorded (`SHAPE.jsonl`, `SHAPE-trace.json.gz` in the
folder given; `python3 lab/probe_phase_check.py FOLDER [small|ddp|reference]`) and prints, per profiled step and phase, the probe's duration (CUDA events) beside
the same phase read from the trace as CUDA events read it: from the later of the host entering the
phase's record_function and the device finishing the work launched before, to the later of the
host leaving it and the end of the last kernel launched inside it; and their ratio.

The trace and the events are matched by step order: the trace's ProfilerStep#N is the script's
loop index N; the probe numbers the same optimizer steps from 0.
"""
import gzip
import json
import os
import sys


def trace_phases(path):
    trace = json.load(gzip.open(path, "rt"))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    # The host's spans only: Kineto writes each record_function's GPU span under the same name too
    # (cat gpu_user_annotation), which would count a phase twice.
    host = [e for e in events if e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"]
    steps = [e for e in host if str(e.get("name", "")).startswith("ProfilerStep#")]
    marks = [e for e in host if str(e.get("name", "")).startswith("phase:")]
    launches = {}  # correlation id -> launch ts on the host
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "Launch" in e.get("name", ""):
            launches[e.get("args", {}).get("correlation")] = e["ts"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    out = {}
    for s in steps:
        n = int(s["name"].split("#")[1])
        s0, s1 = s["ts"], s["ts"] + s["dur"]
        for m in marks:
            if not (s0 <= m["ts"] < s1):
                continue
            m0, m1 = m["ts"], m["ts"] + m["dur"]
            launched = [(launches.get(k.get("args", {}).get("correlation"), -1), k) for k in kernels]
            mine = [k for t, k in launched if m0 <= t <= m1]
            if mine:
                # What a CUDA event recorded on entering and on leaving the phase reads: it completes
                # once the host has recorded it and the device has done the work queued before it.
                before = [k["ts"] + k["dur"] for t, k in launched if 0 <= t < m0]
                start = max([m0] + [e for e in before if e > m0 - 1e6])
                end = max(m1, max(k["ts"] + k["dur"] for k in mine))
                key = (n, m["name"][6:])  # a phase marked twice in a step (two outermost calls) adds up
                out[key] = out.get(key, 0.0) + (end - start) / 1000.0
    return out


def probe_phases(path):
    out = {}
    for line in open(path):
        e = json.loads(line)
        if e.get("type") != "step":
            continue
        for iv in e.get("intervals", []):
            if iv["phase"] in ("forward", "backward", "optimizer"):
                key = (e["step"], iv["phase"])
                out[key] = out.get(key, 0.0) + (iv["end_us"] - iv["start_us"]) / 1000.0
    return out


def main():
    folder = sys.argv[1]
    shape = sys.argv[2] if len(sys.argv) > 2 else "small"  # lab/probe_gpu_check.py's PROFILED shapes
    trace = trace_phases(os.path.join(folder, f"{shape}-trace.json.gz"))
    probe = probe_phases(os.path.join(folder, f"{shape}.jsonl"))
    print("step  phase       probe ms  trace ms  probe/trace")
    worst = 0.0
    for (step, phase), t in sorted(trace.items()):
        p = probe.get((step, phase))
        if p is None:
            print(f"{step:4}  {phase:10}        -  {t:8.3f}")
            continue
        worst = max(worst, abs(p / t - 1))
        print(f"{step:4}  {phase:10}  {p:7.3f}  {t:8.3f}  {p / t:11.3f}")
    print(f"largest difference: {worst * 100:.1f} %")


if __name__ == "__main__":
    main()
