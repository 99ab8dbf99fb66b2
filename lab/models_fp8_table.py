#!/usr/bin/env python3
"""The table of `scripts/gpu-bench.sh models-fp8`: per model at full depth, the worker's `amp fp8` +
`compile fused` step against its bf16 `compile fused` step, round by round.

    models_fp8_table.py LOG_DIR

LOG_DIR holds NAME-{bf16,fp8}-K.jsonl (K: the round). Per log: the median measured step (ms) and the
step's peak memory (the allocator's phase peaks when logged, GiB). The ratio of a round is fp8 / bf16
of that round; the last column is the mean of the rounds' ratios. Target (issue 21): <= 0.85."""
import glob, os, re, statistics, sys

from gpu_table import read_events
from models_check_table import logged_peak

NAME = re.compile(r"^(.*)-(bf16|fp8)-(\d+)\.jsonl$")
GIB = 1 << 30


def measure(path):
    """(median step ms, peak GiB, error or None, micro-batch) of a worker log, rank 0."""
    events = [e for e in read_events(path) if e.get("rank", 0) == 0]
    mb = next((e["config"].get("micro_batch") for e in events if e.get("type") == "hello" and "config" in e), "?")
    errors = [e.get("kind", "") + ": " + e.get("message", "")[:60] for e in events if e.get("type") == "error"]
    steps = [e["step_ms"] for e in events if e.get("type") == "step" and not e.get("warmup")]
    if errors or not steps:
        return None, None, (errors or ["no measured steps"])[0], mb
    return statistics.median(steps), logged_peak(events) / GIB, None, mb


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    runs, order = {}, []
    for path in sorted(glob.glob(os.path.join(argv[1], "*.jsonl"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        name, amp, k = m.group(1), m.group(2), int(m.group(3))
        if name not in order:
            order.append(name)
        runs[(name, amp, k)] = measure(path)
    rounds = sorted({k for (_, _, k) in runs})
    head = "%-12s" % "model"
    for k in rounds:
        head += " | %7s %7s %6s" % ("bf16 %d" % k, "fp8 %d" % k, "ratio")
    batches = "/".join(sorted({str(r[3]) for r in runs.values()})) or "?"
    print("models-fp8: full depth, seq 2048, micro-batch %s, compile fused; steps ms (median), ratio fp8 / bf16" % batches)
    print(head + " | %6s | %6s %6s" % ("mean", "GiB16", "GiB8"))
    print("-" * len(head + " | ------ | ------ ------"))
    for name in order:
        line, ratios, problems = "%-12s" % name, [], []
        for k in rounds:
            b, f = runs.get((name, "bf16", k)), runs.get((name, "fp8", k))
            bs, fs = (b or (None,))[0], (f or (None,))[0]
            problems += [x[2] for x in (b, f) if x and x[2]]
            r = fs / bs if bs and fs else None
            if r:
                ratios.append(r)
            line += " | %7s %7s %6s" % ("%.1f" % bs if bs else "-", "%.1f" % fs if fs else "-", "%.3f" % r if r else "-")
        peak = lambda amp: max((runs[(name, amp, k)][1] or 0 for k in rounds if (name, amp, k) in runs), default=0)
        mean = statistics.mean(ratios) if ratios else None
        line += " | %6s | %6.1f %6.1f" % ("%.3f" % mean if mean else "-", peak("bf16"), peak("fp8"))
        if mean:
            line += "  ✔" if mean <= 0.85 else "  ✘"
        if problems:
            line += "  FAILED " + "; ".join(problems)
        print(line)
    print("target: fp8 + fused / bf16 fused <= 0.85")


if __name__ == "__main__":
    main(sys.argv)
