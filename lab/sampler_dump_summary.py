"""Where a kernel-sampled step's GPU time went, from TUNEBENCH_SAMPLER_DUMP=FILE.

    sampler_dump_summary.py DUMP.jsonl[.gz] [--top 40]
    sampler_dump_summary.py --clock DUMP.jsonl[.gz]

The last sampled step of the dump (one JSON line per sampled step: the step's windows on the host
clock, [phase, start, end], and the raw records [kind, start, end, correlation, thread, name], kind
0 kernel, 1 memcpy, 2 memset, 3 CUDA API call, 4 CPU op). Prints the kernel time by phase (each
kernel taking the phase window its launch call fell in) and by kind of kernel within each phase
(cuBLAS GEMMs, cuDNN attention, the project's fused kernels, other ATen kernels), then the top
kernels by total time, with their count and mean duration (names cut at 60 characters).

--clock checks the two clocks the sampler maps onto the host's, over every sampled step: the CPU ops
(Kineto, mapped through the calibration scopes) and the CUDA API calls (CUPTI, mapped through its own
timestamps). A kernel launch is issued from inside the ATen op that launches it, so each launch
call should lie inside a short ATen op (the project's own kernels launch outside any). For each
step it finds the shift of the ops (-200..200 us) that puts the most launch calls inside one; a right
clock needs none. Exits 1 when a step's best shift is more than 10 us."""
import argparse, bisect, collections, gzip, json

SHORT_OP_US = 200  # ops that launch kernels themselves (aten::mm, not aten::linear of a whole layer)

PHASES = ["data_wait", "h2d", "forward", "backward", "recompute", "optimizer", "all_reduce", "all_gather",
          "reduce_scatter", "broadcast", "other"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--clock", action="store_true")
    args = ap.parse_args()
    with (gzip.open(args.dump, "rt") if args.dump.endswith(".gz") else open(args.dump)) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    if args.clock:
        raise SystemExit(check_clock(steps))
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
        key = short_name(name)
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


def short_name(name):
    """A mangled C++ name (_ZN...) as its innermost name (the project's kernels all share one long
    anonymous-namespace prefix); any other name cut at 60 characters."""
    if name.startswith("_ZN"):
        i, parts = 3, []
        while i < len(name) and name[i].isdigit():
            j = i
            while j < len(name) and name[j].isdigit():
                j += 1
            n = int(name[i:j])
            parts.append(name[j:j + n])
            i = j + n
        if parts and i <= len(name):
            return "::".join(p for p in parts if "GLOBAL__N" not in p)[-60:]
    return name[:60]


def launch_share(launches, ops, shift):
    """The share of launch calls lying inside a short op moved by `shift` µs (ops sorted by start)."""
    starts = [o[0] for o in ops]
    n = 0
    for a, b in launches:
        lo = bisect.bisect_left(starts, a - shift - SHORT_OP_US)
        hi = bisect.bisect_right(starts, a - shift)
        n += any(ops[k][0] + shift <= a and b <= ops[k][1] + shift for k in range(lo, hi))
    return n / len(launches) if launches else 0.0


def check_clock(steps):
    worst = 0
    for i, step in enumerate(steps):
        ops = sorted((a, b) for kind, a, b, _, _, name in step["raw"]
                     if kind == 4 and name.startswith("aten::") and b - a < SHORT_OP_US)
        launches = [(a, b) for kind, a, b, _, _, name in step["raw"] if kind == 3 and "Launch" in name]
        shares = {shift: launch_share(launches, ops, shift) for shift in range(-200, 201, 5)}
        best = max(shares, key=lambda k: (shares[k], -abs(k)))
        print(f"sampled step {i}: {len(launches)} launch calls, {100 * shares[0]:.0f} % inside an ATen op as "
              f"recorded; best with the ops moved {best:+d} us ({100 * shares[best]:.0f} %)")
        worst = max(worst, abs(best))
    print(f"clock check: the ops' best shift is within {worst} us of the recorded clock")
    return 0 if steps and worst <= 10 else 1


if __name__ == "__main__":
    main()
