"""What the hardware said in a `scripts/gpu-bench.sh hardware` run, as a short table.

    hardware_table.py LOG_DIR SNAPSHOT_DIR

Per worker log (LOG_DIR/*.jsonl, rank 0): its exit; the memory categories of its last
memory-sampled step (the step event's memory_categories, GiB), their sum against that step's
allocator peak and, where the run wrote one, against the allocator's own counter in its snapshot
file (SNAPSHOT_DIR/<name>.json); an out-of-memory's recorded categories, phase and step; how many
energy readings fell inside the measured steps and over how long; SM and tensor-core activity seen
(GPM), or the worker's reason. Raw readings only: energy per step, tokens per joule, the comparison
with the prediction and the out-of-memory explanation are the product's (`tunebench-cli report`,
which the mode runs on the same logs when the packed CLI is there)."""
import glob, json, os, sys

from gpu_table import read_events

GIB = 1 << 30
CATS = ["parameters", "gradients", "optimizer", "activations", "temporaries", "communication", "unattributed"]


def gib(b):
    return "%.2f" % (b / GIB)


def row(path, snapdir):
    name = os.path.basename(path)[:-6]
    events = [e for e in read_events(path) if e.get("rank", 0) == 0]
    steps = [e for e in events if e.get("type") == "step"]
    done = next((e for e in events if e.get("type") == "done"), None)
    out = ["%-26s exit %s" % (name, done["exit_code"] if done else "?")]
    sampled = [s for s in steps if "memory_categories" in s and not s.get("warmup")]
    if sampled:
        s = sampled[-1]
        c = s["memory_categories"]
        vals = [c.get(k + "_bytes", 0) for k in CATS]
        total = sum(vals)
        out.append("  memory at the %s of step %d: %s | reserved-free %s GiB" % (
            c.get("phase", "?"), s["step"], " ".join("%s %s" % (k[:5], gib(v)) for k, v in zip(CATS, vals)),
            gib(c.get("reserved_free_bytes", 0))))
        peak = s["memory"]["peak_bytes"]
        out.append("  categories sum %s GiB = %.1f %% of the run's allocator peak %s GiB" % (
            gib(total), 100.0 * total / peak if peak else 0, gib(peak)))
        snap = os.path.join(snapdir, name + ".json")
        if os.path.exists(snap):
            meta = json.load(open(snap))
            if meta.get("allocated_bytes", -1) > 0:
                out.append("  snapshot %s (step %s, %s): the allocator's counter %s GiB, categories %.3f %% of it" % (
                    os.path.basename(snap), meta.get("step"), meta.get("phase"), gib(meta["allocated_bytes"]),
                    100.0 * total / meta["allocated_bytes"]))
    for w in (e for e in events if e.get("type") == "warning" and e.get("kind") in ("memory-categories", "gpm", "energy")):
        out.append("  warning %s: %s" % (w["kind"], w["message"][:200]))
    for e in (e for e in events if e.get("type") == "error"):
        d = e.get("details", {})
        out.append("  error %s: %s" % (e.get("kind"), e.get("message", "")[:160]))
        if "memory_categories" in d:
            c = d["memory_categories"]
            out.append("  at the out-of-memory (%s, step %s, asked %s GiB): %s" % (
                d.get("oom_phase"), d.get("oom_step"), gib(d.get("requested_bytes", 0)),
                " ".join("%s %s" % (k[:5], gib(c.get(k + "_bytes", 0))) for k in CATS)))
            if d.get("memory_categories_problem"):
                out.append("  (%s)" % d["memory_categories_problem"])
        elif e.get("kind") == "oom":
            out.append("  no allocator state in the error's details")
    measured = [s for s in steps if not s.get("warmup")]
    if measured:
        lo, hi = min(s["start_us"] for s in measured), max(s["end_us"] for s in measured)
        gpu = [e for e in events if e.get("type") == "gpu" and lo <= e.get("t_us", 0) <= hi]
        energy = [e for e in gpu if "energy_mj" in e]
        sm = [e["sm_activity_pct"] for e in gpu if "sm_activity_pct" in e]
        tc = [e["tensor_activity_pct"] for e in gpu if "tensor_activity_pct" in e]
        span = (energy[-1]["t_us"] - energy[0]["t_us"]) / 1e6 if len(energy) > 1 else 0
        out.append("  energy readings: %d over %.1f s of %.1f s measured; GPM samples: %d (SM %s, tensor %s)" % (
            len(energy), span, (hi - lo) / 1e6, len(sm),
            "%.0f %%" % (sum(sm) / len(sm)) if sm else "-", "%.0f %%" % (sum(tc) / len(tc)) if tc else "-"))
    return out


def unsampled_median_ms(path):
    """The median of a run's measured steps that were neither kernel- nor memory-sampled."""
    steps = [e for e in read_events(path) if e.get("rank", 0) == 0 and e.get("type") == "step"
             and not e.get("warmup") and not e.get("gpu_sampled") and not e.get("memory_sampled")]
    ms = sorted(s["step_ms"] for s in steps)
    return ms[len(ms) // 2] if ms else None


def sampling_cost(logdir):
    """Unsampled steps of the sampled micro-batch-2 runs against runs without any sampling."""
    def medians(names):
        out = [unsampled_median_ms(os.path.join(logdir, n + ".jsonl")) for n in names]
        return [m for m in out if m is not None]
    sampled = medians(["hw-1b-mb2", "hw-1b-mb2-again"])
    plain = medians(["hw-1b-mb2-unsampled-1", "hw-1b-mb2-unsampled-2"])
    if not sampled or not plain:
        return []
    a, b = sum(sampled) / len(sampled), sum(plain) / len(plain)
    return ["sampling's cost on the steps it does not sample (micro-batch 2): %s ms sampled runs, %s ms "
            "without sampling: %.4fx" % (" ".join("%.2f" % m for m in sampled), " ".join("%.2f" % m for m in plain),
                                         a / b)]


def main():
    logdir, snapdir = sys.argv[1], sys.argv[2]
    for path in sorted(glob.glob(os.path.join(logdir, "*.jsonl"))):
        print("\n".join(row(path, snapdir)))
    print("\n".join(sampling_cost(logdir)))


if __name__ == "__main__":
    main()
