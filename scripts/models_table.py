"""The model-shape table of scripts/gpu-bench.sh models-probe / models-sweep: per shape the worker
against PyTorch in the same call (eager / eager, compile fused / torch.compile), fp8 + fused
against bf16 fused, and, where `tunebench-cli predict --json` outputs are given (a folder of
w-NAME.json), the step-time and peak-memory predictions against what was measured.
Usage: models_table.py results.tsv [predict-dir]. Targets (issue): eager <= 1.00, fused <= 1.00,
fp8 <= 0.85, step prediction within 10 %, memory within 3 %."""
import json, os, statistics, sys


def worker(path):
    done, attention, phases, adamw = None, None, {}, "torch"
    try:
        for line in open(path):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("rank", 0) != 0:
                continue
            t = e.get("type")
            if t == "done":
                done = e
            elif t == "error":
                return dict(error=e["kind"] + ": " + e["message"][:70])
            elif t == "log" and e.get("message", "").startswith("attention kernel: "):
                attention = e["message"][len("attention kernel: "):].split(" ")[0]
            elif t == "hello" and str(e.get("config", {}).get("compile", "")).startswith("fused"):
                adamw = "own"  # the worker's kernel, unless it warns that it fell back
            elif t == "warning" and e.get("kind") == "optimizer":
                adamw = "torch"
            elif t == "step" and not e.get("warmup"):
                per = {}
                for iv in e.get("intervals", []):
                    per[iv["phase"]] = per.get(iv["phase"], 0.0) + (iv["end_us"] - iv["start_us"]) / 1e3
                for k, v in per.items():
                    phases.setdefault(k, []).append(v)
    except OSError as err:
        return dict(error=str(err))
    if not done or done.get("exit_code") != 0:
        return dict(error="no done event" if not done else "exit %d" % done["exit_code"])
    s = done["summary"]
    med = {k: statistics.median(v) for k, v in phases.items()}
    return dict(step_ms=s["step_ms_median"], mfu=s.get("mfu", -1), peak_gib=s["peak_bytes"] / 2**30,
                attention=attention or "?", forward=med.get("forward"), backward=med.get("backward"),
                optimizer=med.get("optimizer"), adamw=adamw)


def main():
    w, r = {}, {}
    for line in open(sys.argv[1]):
        kind, name, data = line.rstrip("\n").split("\t", 2)
        if kind == "worker":
            w[name] = worker(data)
        else:
            j = json.loads(data)
            r[name] = dict(step_ms=j["step_ms"], peak_gib=j["peak_gib"])
    pred_dir = sys.argv[2] if len(sys.argv) > 2 else None
    shapes = []
    for name in w:
        base = name[2:]
        for suffix in ("-fused-flash", "-fused", "-fp8"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        if base not in shapes:
            shapes.append(base)
    ratio = lambda a, b: "%.3f" % (a / b) if a and b else "-"
    hdr = "%-13s %8s %8s %6s %8s %8s %6s %8s %6s %5s %5s" % (
        "shape", "eager", "torch", "ratio", "fused", "compile", "ratio", "fp8", "/fused", "MFU%", "attn")
    print(hdr)
    print("-" * len(hdr))
    rows_pred = []
    for s in shapes:
        e, f, q = w.get("w-" + s, {}), w.get("w-" + s + "-fused", {}), w.get("w-" + s + "-fp8", {})
        re_, rc = r.get("r-" + s, {}), r.get("r-" + s + "-fused", {})
        g = lambda d, k: d.get(k) if "error" not in d else None
        cell = lambda v: "%8.1f" % v if v else "%8s" % ("FAIL" if v is None else "-")
        mfu = g(f, "mfu") or g(e, "mfu")
        print("%-13s %s %s %6s %s %s %6s %s %6s %5s %5s" % (
            s, cell(g(e, "step_ms")), cell(re_.get("step_ms")), ratio(g(e, "step_ms"), re_.get("step_ms")),
            cell(g(f, "step_ms")), cell(rc.get("step_ms")), ratio(g(f, "step_ms"), rc.get("step_ms")),
            cell(g(q, "step_ms")), ratio(g(q, "step_ms"), g(f, "step_ms")),
            "%.1f" % (mfu * 100) if mfu and mfu > 0 else "-", (f.get("attention") or e.get("attention") or "?")[:5]))
        for d in (e, f, q):
            if "error" in d:
                print("   FAILED: " + d["error"])
        if pred_dir:
            for run, d in (("w-" + s, e), ("w-" + s + "-fused", f), ("w-" + s + "-fp8", q)):
                p = os.path.join(pred_dir, run + ".json")
                if "error" in d or not os.path.exists(p):
                    continue
                try:
                    j = json.load(open(p))
                except ValueError:
                    continue
                step = (j.get("step") or {}).get("step_ms")
                mem = j["memory"]["peak_bytes"] / 2**30
                rows_pred.append((run, step, d["step_ms"], mem, d["peak_gib"]))
    print("\n%-26s %8s %6s %8s %8s %8s %8s %6s %5s" % ("worker run", "step ms", "MFU%", "forward", "backward",
                                                       "optim.", "peakGiB", "attn", "adamw"))
    f1 = lambda v: "%8.1f" % v if isinstance(v, (int, float)) else "%8s" % "-"
    for name, d in w.items():
        if "error" in d:
            print("%-26s FAILED %s" % (name, d["error"]))
            continue
        print("%-26s %s %6s %s %s %s %s %6s %5s" % (
            name, f1(d["step_ms"]), "%.1f" % (d["mfu"] * 100) if d["mfu"] and d["mfu"] > 0 else "-", f1(d["forward"]),
            f1(d["backward"]), f1(d["optimizer"]), f1(d["peak_gib"]), d["attention"][:6], d["adamw"]))
    if rows_pred:
        print("\n%-22s %9s %9s %7s %9s %9s %7s" % ("prediction", "step ms", "measured", "error", "peak GiB",
                                                  "measured", "error"))
        for run, ps, ms, pm, mm in rows_pred:
            err = lambda a, b: "%+.1f%%" % ((a / b - 1) * 100) if a and b else "-"
            print("%-22s %9s %9.1f %7s %9.1f %9.1f %7s" % (run, "%.1f" % ps if ps else "-", ms, err(ps, ms), pm, mm,
                                                         err(pm, mm)))
        print("targets: step within 10 %, memory within 3 %; ratios: eager and fused <= 1.00, fp8/fused <= 0.85")


if __name__ == "__main__":
    main()
