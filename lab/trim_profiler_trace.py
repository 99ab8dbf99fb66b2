"""Keeps the first N ProfilerStep#s of a torch.profiler trace, so that a recorded trace fits in
tests/data (a few hundred KB gzipped). Nothing of the kept steps changes:

  - the CPU side (cpu_op, user_annotation, cuda_runtime, cuda_driver, python, fwdbwd flows, ...)
    is cut at the start of the first dropped ProfilerStep#: every event that starts there or later
    goes;
  - a GPU activity (kernel, gpu_memcpy, gpu_memset) stays when its launch (the cuda_runtime /
    cuda_driver event with its correlation id) stays, wherever it ran: the kernels a kept step
    launched may run past the cut (GPU-bound steps do); its ac2g flow events go with it;
  - gpu_user_annotation ProfilerStep#s of dropped steps go; metadata (ph M) and the header stay.

    python3 trim_profiler_trace.py IN.pt.trace.json.gz OUT.pt.trace.json.gz --steps 2

The output is gzip (level 9, no name or time in the header, so the bytes depend only on the input).
"""
import argparse, gzip, json

GPU = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
LAUNCH = {"cuda_runtime", "cuda_driver", "Runtime"}


def trim(trace, steps):
    ev = trace["traceEvents"]
    starts = sorted(e["ts"] for e in ev
                    if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op")
                    and str(e.get("name", "")).startswith("ProfilerStep#"))
    if len(starts) <= steps:
        return trace, len(starts)
    cut = starts[steps]
    kept_launch = {e["args"]["correlation"] for e in ev
                   if e.get("cat") in LAUNCH and e.get("ts", cut) < cut and "correlation" in e.get("args", {})}
    kept_steps = {f"ProfilerStep#{n}" for n in
                  sorted(int(str(e["name"]).split("#")[1]) for e in ev
                         if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                         and str(e.get("name", "")).startswith("ProfilerStep#"))[:steps]}

    def keep(e):
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "M" or "ts" not in e:
            return True
        if cat in GPU:
            return e.get("args", {}).get("correlation") in kept_launch
        if cat == "ac2g":  # launch -> kernel arrows carry the correlation id
            return e.get("id") in kept_launch
        if cat == "gpu_user_annotation":
            return e.get("name") in kept_steps
        if ph == "i":  # the profiler's own instants (iteration start, record window end)
            return True
        return e["ts"] < cut

    out = dict(trace)
    out["traceEvents"] = [e for e in ev if keep(e)]
    return out, steps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--steps", type=int, required=True, help="ProfilerStep#s to keep, the first ones")
    a = p.parse_args()
    with gzip.open(a.src, "rt") if a.src.endswith(".gz") else open(a.src) as f:
        trace = json.load(f)
    out, kept = trim(trace, a.steps)
    text = json.dumps(out, separators=(",", ":"))
    with open(a.dst, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as g:
        g.write(text.encode())
    print(f"{a.dst}: {kept} step(s), {len(out['traceEvents'])} of {len(trace['traceEvents'])} events")


if __name__ == "__main__":
    main()
