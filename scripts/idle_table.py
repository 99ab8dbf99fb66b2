"""GPU busy and GPU idle of a `scripts/gpu-bench.sh idle` run, as a short table.

    idle_table.py LOG_DIR [TRACE_DIR]

Worker logs (LOG_DIR/*.jsonl): the median step of all measured steps, of the unsampled and of the
kernel-sampled ones; GPU busy (gpu_busy_ms / step_ms of the sampled steps, median); the GPU-idle
parts per step from the sampled steps' intervals (host wait, launch gaps, sync wait); NVML's
utilisation (median). The overhead rows compare the unsampled steps of NAME with NAME-untimed.
Traces (TRACE_DIR/NAME/rank0*.json.gz): the union of kernel/memcpy/memset intervals inside each
ProfilerStep window over the window, computed here from the raw events (median over steps)."""
import glob, gzip, json, os, statistics, sys

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
    for s in sampled:
        for k in parts:
            parts[k].append(sum(i["end_us"] - i["start_us"] for i in s.get("intervals", []) if i["phase"] == k) / 1e3)
    return dict(step=med([s["step_ms"] for s in steps]), plain=med([s["step_ms"] for s in plain]),
                sampled=med([s["step_ms"] for s in sampled]), n_sampled=len(sampled),
                busy=med([s.get("gpu_busy_ms", 0) / s["step_ms"] for s in sampled if s["step_ms"] > 0]),
                host=med(parts["host_wait"]), launch=med(parts["launch_gap"]), sync=med(parts["sync_wait"]),
                nvml=med(util), err=err)


def trace_busy(path):
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
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
    print("%-26s %8s %8s %8s %3s %6s %8s %8s %8s %6s" % ("run", "step ms", "unsamp", "sampled", "n", "busy%",
                                                        "hostwait", "launch", "sync", "nvml%"))
    for name, r in rows.items():
        if r["err"] and r["n_sampled"] == 0 and r["step"] != r["step"]:
            print("%-26s %s" % (name, r["err"]))
            continue
        print("%-26s %8.2f %8.2f %8.2f %3d %6.1f %8.2f %8.2f %8.2f %6.0f%s" % (
            name, r["step"], r["plain"], r["sampled"], r["n_sampled"], 100 * r["busy"], r["host"], r["launch"],
            r["sync"], r["nvml"], ("  " + r["err"]) if r["err"] else ""))
    print("\noverhead (unsampled steps of the timed runs against the untimed run, median step):")
    for name, r in rows.items():
        for suffix in ("-timed", "-sampled"):
            base = rows.get(name[:-len(suffix)] + "-untimed") if name.endswith(suffix) else None
            if base:
                print("  %-26s %8.3f ms vs %8.3f ms untimed: %+.2f %%" % (
                    name, r["plain"], base["step"], 100 * (r["plain"] / base["step"] - 1)))
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
