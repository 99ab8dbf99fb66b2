"""Where a kernel-sampled step's GPU time went, from TUNEBENCH_SAMPLER_DUMP=FILE.

    sampler_dump_summary.py DUMP.jsonl[.gz] [--top 40]

The last sampled step of the dump (one JSON line per sampled step: the step's windows on the host
clock, [phase, start, end], and the raw records [kind, start, end, correlation, thread, name], kind
0 kernel, 1 memcpy, 2 memset, 3 CUDA API call, 4 CPU op). Prints the kernel time by phase (each
kernel taking the phase window its launch call fell in) and by kind of kernel within each phase
(cuBLAS GEMMs, cuDNN attention, the project's fused kernels, other ATen kernels), then the top
kernels by total time, with their count and mean duration (names cut at 60 characters)."""
import argparse, collections, gzip, json

PHASES = ["data_wait", "h2d", "forward", "backward", "recompute", "optimizer", "all_reduce", "all_gather",
          "reduce_scatter", "broadcast", "other"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    with (gzip.open(args.dump, "rt") if args.dump.endswith(".gz") else open(args.dump)) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    step = steps[-1]
    windows = step["windows"]
    launch = {r[3]: r[1] for r in step["raw"] if r[0] == 3}
    kernels = [r for r in step["raw"] if r[0] in (0, 1, 2) and step["start"] <= r[1] <= step["end"]]

    def phase_of(t):
        best = None
        for p, a, b in windows:
            if a <= t <= b and (best is None or a >= best[1]):
                best = (p, a)
        return PHASES[best[0]] if best and best[0] < len(PHASES) else "other"

    def kind_of(name):
        if name.startswith("nvjet") or "gemm" in name.lower():
            return "GEMM (cuBLAS)"
        if "cudnn" in name:
            return "cuDNN"
        if "tunebench" in name:
            return "fused (ours)"
        if "at6native" in name:
            return "ATen"
        return name.split()[0]

    by_phase = collections.Counter()
    by_kind = collections.defaultdict(lambda: [0, 0.0])
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for kind, a, b, corr, _, name in kernels:
        phase = phase_of(launch.get(corr, a))
        by_phase[phase] += (b - a) / 1000
        by_kind[(phase, kind_of(name))][0] += 1
        by_kind[(phase, kind_of(name))][1] += (b - a) / 1000
        key = name[:60]
        by_name[key][0] += 1
        by_name[key][1] += (b - a) / 1000
    span = (step["end"] - step["start"]) / 1000
    busy = sum(by_phase.values())
    print(f"step {span:.2f} ms; kernel, copy and memset time {busy:.2f} ms (overlaps counted twice)")
    for p, ms in by_phase.most_common():
        print(f"  {p:<12} {ms:8.2f} ms")
        for (q, k), (n, kms) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
            if q == p:
                print(f"      {k:<14} {kms:8.2f} ms in {n} calls")
    print(f"top {args.top} by total time: ms | calls | mean us | name")
    for name, (n, ms) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[: args.top]:
        print(f"{ms:8.2f} | {n:5d} | {1000 * ms / n:8.1f} | {name}")


if __name__ == "__main__":
    main()
