"""Compares loss curves of worker runs with a reference run of the same seed (issue 10's check of
the fused kernels and fp8 against eager bf16).

    python3 loss_band.py REF.jsonl --seed-run OTHER_SEED.jsonl CAND.jsonl [CAND.jsonl ...] [--band 0.02]

For each candidate: the relative gap between 20-step moving averages of rank 0's loss, its
largest value over the run and its value at the end. A candidate passes when its final gap is
within --band and its largest gap is no larger than that of the eager run with another seed,
i.e. the candidate follows the reference more closely than the reference follows itself across
seeds (the plateau before a loss drop makes the exact step of the drop seed-dependent)."""
import argparse, json


def losses(path):
    out = {}
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") == "step" and e.get("rank", 0) == 0:
            out[e["step"]] = e["loss"]
    return [out[k] for k in sorted(out)]


def smooth(xs, w=20):
    return [sum(xs[max(0, i - w + 1):i + 1]) / len(xs[max(0, i - w + 1):i + 1]) for i in range(len(xs))]


def gaps(ref_s, path):
    xs = losses(path)
    n = min(len(xs), len(ref_s))
    if n == 0:
        return None
    cs = smooth(xs[:n])
    g = [abs(cs[i] - ref_s[i]) / ref_s[i] for i in range(n)]
    return dict(n=n, first=xs[0], last_mean=cs[-1], max_gap=max(g), final_gap=g[-1])


p = argparse.ArgumentParser()
p.add_argument("ref"); p.add_argument("cands", nargs="+"); p.add_argument("--seed-run", required=True)
p.add_argument("--band", type=float, default=0.02)
a = p.parse_args()
ref = losses(a.ref)
rs = smooth(ref)
print(f"reference {a.ref.split('/')[-1]}: {len(ref)} steps, loss {ref[0]:.3f} -> last-20 mean {rs[-1]:.3f}")
spread = gaps(rs, a.seed_run)
print(f"other seed {a.seed_run.split('/')[-1]}: last-20 mean {spread['last_mean']:.3f}, largest gap "
      f"{100*spread['max_gap']:.1f} %, final gap {100*spread['final_gap']:.1f} % (the run-to-run spread)")
ok = True
for c in a.cands:
    g = gaps(rs, c)
    if g is None or g["n"] != len(ref):
        print(f"{c.split('/')[-1]}: incomplete"); ok = False; continue
    passed = g["final_gap"] <= a.band and g["max_gap"] <= spread["max_gap"]
    ok &= passed
    print(f"{c.split('/')[-1]}: last-20 mean {g['last_mean']:.3f}, final gap {100*g['final_gap']:.2f} % "
          f"(band {100*a.band:.0f} %), largest gap {100*g['max_gap']:.1f} % (other seed: "
          f"{100*spread['max_gap']:.1f} %) {'ok' if passed else 'OUTSIDE'}")
print("LOSSBAND " + ("ok" if ok else "outside"))
