"""Step phases and memory of a `scripts/gpu-bench.sh models-check` run, as a short table.

    models_check_table.py LOG_DIR

Per worker log (LOG_DIR/*.jsonl, rank 0): the median measured step and the median of its forward,
backward and optimizer intervals (ms); the allocator's peak of each phase from the
TUNEBENCH_MEMORY_PHASES log lines (max over the measured steps, GiB), the step's peak (their max)
and the memory model's predicted peak (gpu_table.predicted_peak_bytes: the model event's field in
logs of workers before issue 42, else `tunebench-cli accuracy` on the log) with its error against
that peak."""
import glob, os, re, statistics, sys

from gpu_table import predicted_peak_bytes, read_events

PHASE = re.compile(r"(\w+) peak (\d+) then (\d+);")
GIB = 1 << 30


def logged_peak(events):
    """The allocator's peak of a TUNEBENCH_MEMORY_PHASES run: the largest phase peak logged (or the
    steps' own peak_bytes, whichever is larger)."""
    peaks = [s["memory"]["peak_bytes"] for s in events if s.get("type") == "step"]
    for e in events:
        if e.get("type") == "log":
            peaks += [int(p) for _, p, _ in PHASE.findall(e.get("message", ""))]
    return max(peaks, default=0)


def row(path):
    steps, model, peaks, err = [], None, {}, None
    for e in read_events(path):
        if e.get("rank", 0) != 0:
            continue
        t = e["type"]
        if t == "step" and not e.get("warmup"):
            steps.append(e)
        elif t == "model":
            model = e
        elif t == "error":
            err = e.get("kind", "") + ": " + e.get("message", "")[:80]
        elif t == "log" and e.get("message", "").startswith("memory phases, step "):
            step = int(e["message"].split("step ")[1].split(":")[0])
            for name, peak, _ in PHASE.findall(e["message"]):
                if step >= 0:
                    peaks[name] = max(peaks.get(name, 0), int(peak))
    name = os.path.basename(path)[:-6]
    if err or not steps:
        return "%-18s %s" % (name, err or "no measured steps")
    phase_ms = {}
    for s in steps:
        for i in s.get("intervals", []):
            if i["lane"] == "compute":
                d = phase_ms.setdefault(i["phase"], {})
                d[s["step"]] = d.get(s["step"], 0) + (i["end_us"] - i["start_us"]) / 1000
    med = lambda p: statistics.median(phase_ms[p].values()) if p in phase_ms else float("nan")
    step = statistics.median(s["step_ms"] for s in steps)
    peak = max(peaks.values()) if peaks else max(s["memory"]["peak_bytes"] for s in steps)
    pred = predicted_peak_bytes(path, model) or float("nan")
    return "%-18s %8.2f %8.2f %8.2f %8.2f | %7.2f %7.2f %7.2f %7.2f %7.2f %+7.1f%%" % (
        name, step, med("forward"), med("backward"), med("optimizer"),
        peaks.get("forward", 0) / GIB, peaks.get("backward", 0) / GIB, peaks.get("optimizer", 0) / GIB,
        peak / GIB, pred / GIB, 100 * (pred - peak) / peak if peak else float("nan"))


def main():
    print("%-18s %8s %8s %8s %8s | %7s %7s %7s %7s %7s %8s" % (
        "run", "step ms", "fwd", "bwd", "opt", "pk fwd", "pk bwd", "pk opt", "peak", "pred", "error"))
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
        print(row(path))


if __name__ == "__main__":
    main()
