"""GPU busy and GPU idle of a `scripts/gpu-bench.sh idle` run, as a short table.

    idle_table.py LOG_DIR [TRACE_DIR]

Worker logs (LOG_DIR/*.jsonl): the median step of all measured steps, of the unsampled and of the
kernel-sampled ones; GPU busy (gpu_busy_ms / step_ms of the sampled steps, median); the GPU-idle
parts per step from the sampled steps' intervals (host wait, launch gaps, sync wait) and the gap
each sampled step starts with ("1st gap": the profiler's start-up cost showed there); NVML's
utilisation (median). The overhead rows compare the unsampled steps of every timed or sampled run of
a model (the name's first word: tiny-timed-2, 7b-sampled) with the median of its untimed runs.
Traces (TRACE_DIR/NAME/rank0*.json.gz): the union of kernel/memcpy/memset intervals inside each
ProfilerStep window over the window, computed here from the raw events (median over steps)."""
import glob, gzip, json, os, re, statistics, sys

from gpu_table import read_events


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def worker(path):
    steps, util, err = [], [], None
    for e in read_events(path):
        if e.get("rank", 0) != 0:
            continue
        if e["type"] == "step" and not e.get("warmup"):
            steps.append(e)
        elif e["type"] == "gpu" and e.get("util_pct") is not None:
            util.append(e["util_pct"])
        elif e["type"] == "error":
            err = e["kind"] + ": " + e["message"][:80]
        elif e["type"] == "warning" and e.get("kind") == "kernel-sampling":
            err = "sampling off: " + e["message"][:70]
    sampled = [s for s in steps if s.get("gpu_sampled")]
    plain = [s for s in steps if not s.get("gpu_sampled")]
    parts = {"host_wait": [], "launch_gap": [], "sync_wait": []}
    first = []  # the GPU-idle gap the step starts with (the profiler's start-up cost showed there)
    for s in sampled:
        for k in parts:
            parts[k].append(sum(i["end_us"] - i["start_us"] for i in s.get("intervals", []) if i["phase"] == k) / 1e3)
        gaps = [i for i in s.get("intervals", []) if i["lane"] == "compute" and i["start_us"] == s["start_us"]
                and i["phase"] in parts]
        first.append((gaps[0]["end_us"] - gaps[0]["start_us"]) / 1e3 if gaps else 0.0)
    return dict(step=med([s["step_ms"] for s in steps]), plain=med([s["step_ms"] for s in plain]),
                sampled=med([s["step_ms"] for s in sampled]), n_sampled=len(sampled),
                busy=med([s.get("gpu_busy_ms", 0) / s["step_ms"] for s in sampled if s["step_ms"] > 0]),
                host=med(parts["host_wait"]), launch=med(parts["launch_gap"]), sync=med(parts["sync_wait"]),
                first=med(first),
                nvml=med(util), err=err)


def trace_busy(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    # the host's ProfilerStep spans (user_annotation; cpu_op in old PyTorch), not their GPU-side
    # copies (gpu_user_annotation), which cover only the kernels' extent
    steps = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op")
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    dev = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in events
                 if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    shares = []
    for s in steps:
        a, b = s["ts"], s["ts"] + s["dur"]
        busy, end = 0.0, a
        for x, y in dev:
            x, y = max(x, end), min(y, b)
            if y > x:
                busy += y - x
                end = y
        shares.append(busy / (b - a) if b > a else 0)
    return med(shares), med([s["dur"] / 1e3 for s in steps])


def main():
    logs = sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl")))
    rows = {os.path.basename(p)[:-6]: worker(p) for p in logs}
    print("%-26s %8s %8s %8s %3s %6s %8s %8s %8s %7s %6s" % ("run", "step ms", "unsamp", "sampled", "n", "busy%",
                                                             "hostwait", "launch", "sync", "1st gap", "nvml%"))
    for name, r in rows.items():
        if r["err"] and r["n_sampled"] == 0 and r["step"] != r["step"]:
            print("%-26s %s" % (name, r["err"]))
            continue
        print("%-26s %8.2f %8.2f %8.2f %3d %6.1f %8.2f %8.2f %8.2f %7.2f %6.0f%s" % (
            name, r["step"], r["plain"], r["sampled"], r["n_sampled"], 100 * r["busy"], r["host"], r["launch"],
            r["sync"], r["first"], r["nvml"], ("  " + r["err"]) if r["err"] else ""))
    # Overhead: the unsampled steps of each timed or sampled run against the untimed runs of its
    # model (NAME-untimed or NAME-untimed-K; several are interleaved with the timed ones, and their
    # spread says how much a run-to-run difference means).
    print("\noverhead (unsampled steps against the untimed runs of the model, median step):")
    families = sorted({n.split("-")[0] for n in rows})
    for fam in families:
        base = [r["step"] for n, r in rows.items() if re.fullmatch(re.escape(fam) + r"-untimed(-\d+)?", n)]
        base = [b for b in base if b == b]
        if not base:
            continue
        ref = med(base)
        print("  %s untimed: %s ms (median %.3f, spread %.1f %%)" % (
            fam, ", ".join("%.3f" % b for b in base), ref, 100 * (max(base) - min(base)) / ref))
        timed = []
        for n, r in rows.items():
            # the same configuration only: NAME-timed[-K], NAME-sampled[-variant], not NAME-fused-sampled
            if re.fullmatch(re.escape(fam) + r"-(timed|sampled)(-\w+)?", n) and r["plain"] == r["plain"]:
                print("  %-26s %8.3f ms: %+.2f %%" % (n, r["plain"], 100 * (r["plain"] / ref - 1)))
                if re.fullmatch(re.escape(fam) + r"-timed(-\d+)?", n):
                    timed.append(r["plain"])
        if len(timed) > 1:
            print("  %s timed, median of %d runs: %.3f ms: %+.2f %% (untimed median of %d runs)" % (
                fam, len(timed), med(timed), 100 * (med(timed) / ref - 1), len(base)))
    if len(sys.argv) > 2:
        print("\ntraces (kernel union / ProfilerStep window, median over steps, rank 0):")
        for d in sorted(glob.glob(os.path.join(sys.argv[2], "*"))):
            files = sorted(glob.glob(os.path.join(d, "rank0*.json.gz")))
            if files:
                share, step = trace_busy(files[0])
                print("  %-24s busy %5.1f %% of %7.2f ms  (%d KiB)" % (os.path.basename(d), 100 * share, step,
                                                                      os.path.getsize(files[0]) // 1024))


if __name__ == "__main__":
    main()
