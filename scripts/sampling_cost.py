"""The cost of kernel sampling to the unsampled steps, measured within each process.

    sampling_cost.py LOG_DIR              # a gpu-bench.sh sampling-cost run's worker logs
    sampling_cost.py LOG_DIR --keep F.tsv.gz  # also write the step times it used, compactly
    sampling_cost.py F.tsv.gz             # the same table from a kept file (tests/data/idle/)

Between processes a launch-bound step varies by 13-22 % (docs/BENCHMARKS.md, run 3), which hides a
cost of 1 %. So each run is compared with itself: the median step of block A (warm-up steps
WARM_FROM..warmup-1, before any sample) against block B (the measured steps that were not sampled in
the sampled run; the same step numbers in every run), and the ratio B/A of a sampled run against the
same ratio of the untimed run of its round:

    cost = (B/A of the sampled run) / (B/A of the untimed run) - 1

Whatever drifts over a process's life (clocks, allocator, caches) drifts in both runs and cancels;
what is left is what sampling leaves behind in the steps it does not sample. Runs are named
tiny-VARIANT-K (K: the round; VARIANT untimed, sampled, nohostops, ...), as `scripts/gpu-bench.sh
sampling-cost` writes them; every variant is compared with the untimed run of its round. Prints one
row per round and, per variant, the mean with its standard error (means of the step times include
the step after each sample, which re-attaches CUPTI)."""
import glob, gzip, json, os, statistics, sys

from gpu_table import read_events

# The untimed run each variant ran beside (at the same time, on other cores: gpu-bench.sh).
PARTNER = {"nohostops": "untimedb"}
WARM_FROM = 100  # the first steps of a process settle (allocator, clocks): left out of block A


def steps(path, cpu=False):
    """{step: (ms, sampled)} of rank 0; with `cpu` the training thread's CPU ms instead of the
    wall-clock step (TUNEBENCH_THREAD_CPU=1 log lines), where the log has them."""
    out, config, cpu_ms = {}, None, {}
    for e in read_events(path):
        if e.get("rank", 0) != 0:
            continue
        if "config" in e and config is None:
            config = e["config"]
        if e.get("type") == "step":
            out[e["step"]] = (e["step_ms"], bool(e.get("gpu_sampled")))
        elif e.get("type") == "log" and e.get("message", "").startswith("thread cpu, step "):
            head, us = e["message"][len("thread cpu, step "):].split(": ")
            cpu_ms[int(head)] = float(us.split()[0]) / 1000
    if cpu:
        out = {i: (cpu_ms[i], v[1]) for i, v in out.items() if i in cpu_ms}
    return out, config


def blocks(run, sampled_config):
    """Block A and block B step times of `run`, B at the step numbers the sampled run left unsampled."""
    warmup, every, k = sampled_config["warmup"], sampled_config["kernel_sample_every"], sampled_config["kernel_sample_steps"]
    a = [run[i][0] for i in range(WARM_FROM, warmup) if i in run]
    b = [run[i][0] for i in sorted(run) if i >= warmup and (i - warmup) % every >= k]
    return a, b


class Kept:
    """Step times of every run, from the logs or from a kept TSV (run, step, ms, sampled, cpu ms;
    '#config RUN JSON' lines carry each run's warm-up and sampling schedule)."""

    def __init__(self, source):
        self.rows, self.configs = {}, {}
        if source.endswith(".tsv.gz"):
            with gzip.open(source, "rt") as f:
                for line in f:
                    if line.startswith("#config "):
                        _, name, text = line.rstrip("\n").split(" ", 2)
                        self.configs[name] = json.loads(text)
                        continue
                    name, step, ms, sampled, cpu = line.rstrip("\n").split("\t")
                    self.rows.setdefault(name, {})[int(step)] = (float(ms), sampled == "1",
                                                                 float(cpu) if cpu else None)
            return
        for p in glob.glob(os.path.join(source, "tiny-*-*.jsonl")):
            name = os.path.basename(p)[: -len(".jsonl")]
            wall, config = steps(p)
            cpu, _ = steps(p, cpu=True)
            if config is None:
                continue
            self.configs[name] = {k: config[k] for k in ("warmup", "kernel_sample_every", "kernel_sample_steps")}
            self.rows[name] = {i: (v[0], v[1], cpu[i][0] if i in cpu else None) for i, v in wall.items()}

    def write(self, path):
        with gzip.open(path, "wt") as f:
            for name in sorted(self.rows):
                f.write(f"#config {name} {json.dumps(self.configs[name])}\n")
                for i, (ms, sampled, cpu) in sorted(self.rows[name].items()):
                    f.write(f"{name}\t{i}\t{ms:.3f}\t{int(sampled)}\t{'' if cpu is None else f'{cpu:.3f}'}\n")

    def run(self, name, cpu):
        rows = self.rows.get(name, {})
        if cpu:
            return {i: (v[2], v[1]) for i, v in rows.items() if v[2] is not None}, self.configs.get(name)
        return {i: (v[0], v[1]) for i, v in rows.items()}, self.configs.get(name)


def main():
    kept = Kept(sys.argv[1])
    if len(sys.argv) == 4 and sys.argv[2] == "--keep":
        kept.write(sys.argv[3])
    runs = {}
    for name in kept.rows:
        variant, r = name[len("tiny-"):].rsplit("-", 1)
        runs.setdefault(variant, {})[r] = name
    med = statistics.median
    results = {}
    for variant, cpu in [(v, c) for v in sorted(v for v in runs if not v.startswith("untimed")) for c in (False, True)]:
        if cpu and not kept.run(next(iter(runs[variant].values())), True)[0]:
            continue
        variant_key = variant + (" (thread CPU time)" if cpu else " (wall time)")
        print(f"== {variant_key} against {PARTNER.get(variant, 'untimed')}")
        print("round | untimed A / B ms | run A / B ms | sampled steps | cost (medians) | cost (means)")
        for r in sorted(runs[variant], key=int):
            run, cfg = kept.run(runs[variant][r], cpu)
            partner = PARTNER.get(variant, "untimed")
            unt, _ = kept.run(runs[partner][r], cpu) if r in runs.get(partner, {}) else ({}, None)
            if not run or not unt or cfg is None:
                print(f"{r} | missing run")
                continue
            if cfg["kernel_sample_every"] <= 0:  # timed, unsampled: block B is every measured step
                cfg = dict(cfg, kernel_sample_every=1 << 30, kernel_sample_steps=0)
            ra, rb = blocks(run, cfg)
            ua, ub = blocks(unt, cfg)
            c = (med(rb) / med(ra)) / (med(ub) / med(ua)) - 1
            cm = (statistics.fmean(rb) / statistics.fmean(ra)) / (statistics.fmean(ub) / statistics.fmean(ua)) - 1
            results.setdefault(variant_key, []).append((c, cm))
            n_sampled = sum(1 for v in run.values() if v[1])
            print(f"{r} | {med(ua):.2f} / {med(ub):.2f} | {med(ra):.2f} / {med(rb):.2f} | {n_sampled} | "
                  f"{100 * c:+.2f} % | {100 * cm:+.2f} %")

    def summary(xs):
        se = statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
        return f"{100 * statistics.fmean(xs):+.2f} % ± {100 * se:.2f}"

    print("== summary (mean ± standard error over rounds)")
    for variant, xs in results.items():
        print(f"{variant}: medians {summary([x[0] for x in xs])}; means {summary([x[1] for x in xs])} ({len(xs)} rounds)")


if __name__ == "__main__":
    main()
