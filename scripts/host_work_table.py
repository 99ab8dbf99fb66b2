#!/usr/bin/env python3
"""Is a phase waiting for the host? One row per worker log run with TUNEBENCH_THREAD_CPU=1.

For each measured step the worker logs the host window of every compute phase (how long the
training thread took to queue it) and the cores the thread began and ended the step on; the step
event holds the device time of each phase. A phase whose host window is about as long as its device
time kept the GPU waiting. Printed: medians over the measured steps, and the cores seen.

    scripts/host_work_table.py LOG_DIR
"""
import glob
import json
import os
import re
import statistics
import sys

PHASES = ("forward", "backward", "optimizer")
LINE = re.compile(r"thread cpu, step (\d+): (\d+) us, cores (-?\d+)->(-?\d+);(.*)")
WINDOW = re.compile(r" (\w+) host ([0-9.]+) ms")
PARTS = re.compile(r"block parts host (.*)")


def read(path):
    host, cores, device, steps, parts = {}, set(), {}, {}, {}
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") == "log":
            m = LINE.match(e.get("message", ""))
            if not m:
                continue
            step = int(m.group(1))
            cores.update({int(m.group(3)), int(m.group(4))})
            per = host.setdefault(step, {})
            for name, ms in WINDOW.findall(m.group(5).split(";")[0]):
                per[name] = per.get(name, 0.0) + float(ms)
            p = PARTS.search(m.group(5))
            if p:
                words = p.group(1).split()
                parts[step] = {words[i]: float(words[i + 1]) for i in range(0, len(words) - 1, 2)}
        elif e.get("type") == "step" and not e.get("warmup"):
            per = {}
            for iv in e.get("intervals", []):
                if iv.get("lane") == "compute":
                    per[iv["phase"]] = per.get(iv["phase"], 0.0) + (iv["end_us"] - iv["start_us"]) / 1000.0
            device[e["step"]] = per
            steps[e["step"]] = e["step_ms"]
    return host, cores, device, steps, parts


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    rows, part_rows = [], []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
        host, cores, device, steps, parts = read(path)
        measured = sorted(s for s in steps if s in host)
        if not measured:
            continue
        cells = []
        for phase in PHASES:
            d = median([device[s].get(phase, 0.0) for s in measured])
            h = median([host[s].get(phase, 0.0) for s in measured])
            cells.append("%6.2f %6.2f" % (d, h))
        rows.append("%-32s %7.2f  %s  %s" % (os.path.basename(path)[:-6], median([steps[s] for s in measured]),
                                             "  ".join(cells), ",".join(str(c) for c in sorted(cores))))
        names = list(parts[measured[0]]) if measured[0] in parts else []
        if names:
            part_rows.append("%-32s %s" % (os.path.basename(path)[:-6], "  ".join(
                "%s %5.2f" % (n, median([parts[s].get(n, 0.0) for s in measured if s in parts])) for n in names)))
    print("medians over measured steps, ms; each phase: device time, host window")
    print("%-32s %7s  %-13s  %-13s  %-13s  %s" % ("run", "step", "forward", "backward", "optimizer", "cores"))
    print("\n".join(rows))
    if part_rows:
        print("host time to queue each part of the blocks' forward, summed over the blocks (medians, ms)")
        print("\n".join(part_rows))


if __name__ == "__main__":
    main()
