"""Makes a large torch.profiler trace for the import benchmark (docs/BENCHMARKS.md) by replicating
the profiled steps of a real one (tests/data/traces/) with shifted timestamps and fresh ids.

    python3 lab/make_big_trace.py tests/data/traces/ddp-nw4/rank0.*.pt.trace.json.gz \
        /tmp/big.pt.trace.json --min-mb 200 [--gzip]

Copy k of the step window moves by k window lengths; ProfilerStep#N becomes #N + k * steps, and
every correlation id, External id and flow id gets k * (largest id + 1) added, so launches,
kernels and record_param_comms still pair up exactly as in the original. Events outside the step
window (metadata, the profiler's own spans) are written once. The output is streamed; the file is
for benchmarking only and is not committed."""
import argparse
import gzip
import json
import re


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--min-mb", type=float, default=200.0, help="uncompressed size to reach")
    p.add_argument("--gzip", action="store_true", help="write gzip (as tensorboard_trace_handler does)")
    a = p.parse_args()

    opener = gzip.open if a.trace.endswith(".gz") else open
    with opener(a.trace, "rt") as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    steps = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
             and e.get("name", "").startswith("ProfilerStep#")]
    if not steps:
        raise SystemExit("no ProfilerStep#N in " + a.trace)
    t0 = min(e["ts"] for e in steps)
    t1 = max(e["ts"] + e["dur"] for e in steps)
    span = t1 - t0 + 1000.0
    numbers = [int(e["name"][13:]) for e in steps]
    n_steps = max(numbers) - min(numbers) + 1

    def ids(e):
        args = e.get("args", {})
        return [args.get("correlation", 0), args.get("External id", 0), e.get("id", 0) if isinstance(e.get("id"), int) else 0]

    id_step = max(max(ids(e)) for e in events) + 1
    def in_window(e):
        return isinstance(e.get("ts"), (int, float)) and t0 - 100.0 <= e["ts"] <= t1 + 100.0 and e.get("ph") != "M"

    inside = [e for e in events if in_window(e)]
    outside = [e for e in events if not in_window(e)]
    one_copy = sum(len(json.dumps(e)) + 2 for e in inside)
    copies = max(1, int(a.min_mb * 1e6 / one_copy) + 1)
    step_name = re.compile(r"^ProfilerStep#(\d+)$")

    out = gzip.open(a.out, "wt", compresslevel=6) if a.gzip else open(a.out, "w")
    with out:
        head = json.dumps(doc)[:-1]  # the top-level keys, without the closing brace
        out.write(head + (', ' if doc else '') + '"traceEvents": [\n')
        sep = ""
        for e in outside:
            out.write(sep + json.dumps(e))
            sep = ",\n"
        for k in range(copies):
            shift = k * span
            for e in inside:
                c = dict(e)
                c["ts"] = e["ts"] + shift
                if "args" in e and ("correlation" in e["args"] or "External id" in e["args"]):
                    c["args"] = dict(e["args"])
                    for key in ("correlation", "External id"):
                        if isinstance(c["args"].get(key), int) and c["args"][key] > 0:
                            c["args"][key] += k * id_step
                if isinstance(c.get("id"), int):
                    c["id"] += k * id_step
                m = step_name.match(c.get("name", ""))
                if m:
                    c["name"] = "ProfilerStep#%d" % (int(m.group(1)) + k * n_steps)
                out.write(sep + json.dumps(c))
                sep = ",\n"
        out.write("\n]}\n")
    print("wrote %s: %d copies of %d steps (%d events each)" % (a.out, copies, len(steps), len(inside)))


if __name__ == "__main__":
    main()
