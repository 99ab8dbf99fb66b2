#!/usr/bin/env python3
"""The table of `scripts/gpu-bench.sh models-final`: per shape, the worker's `compile fused` step
against torch.compile (scripts/pytorch_reference.py) at the same shape and depth in the same call,
the step prediction (`tunebench-cli predict --json`, calibrated on sessions/h200-7b.tbsession) and
the attention kernel the worker ran.

Usage: models_final_table.py results.tsv [predict-dir] [layers]
  results.tsv: lines "worker<TAB>w-NAME<TAB>event log" and "ref<TAB>r-NAME<TAB>RESULT json";
  predict-dir: w-NAME.json per row (missing: no prediction column). Targets (issue): ours /
  torch.compile <= 1.00, prediction within 10 %.
"""
import json, os, sys


def worker_row(path):
    step, attention, error = None, None, None
    try:
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                t = e.get("type")
                if t == "done":
                    step = (e.get("summary") or {}).get("step_ms_median")
                    if e.get("exit_code", 0) != 0:
                        error = "exit %s" % e.get("exit_code")
                elif t == "model" and e.get("attention"):
                    attention = e["attention"].split(" ")[0]
                elif t == "log" and e.get("message", "").startswith("attention kernel: ") and not attention:
                    attention = e["message"][len("attention kernel: "):].split(" ")[0]
                elif t == "error":
                    error = (e.get("message") or "error")[:60]
    except OSError as ex:
        error = str(ex)[:60]
    return dict(step_ms=step, attention=attention or "?", error=error)


def read_results(path):
    """results.tsv as (worker rows by name, reference step ms by name, worker names in order), the
    "w-" and "r-" prefixes taken off."""
    ours, ref, order = {}, {}, []
    for line in open(path):
        parts = line.rstrip("\n").split("\t", 2)
        if len(parts) != 3:
            continue
        kind, name, data = parts
        if kind == "worker" and name.startswith("w-"):
            ours[name[2:]] = worker_row(data)
            order.append(name[2:])
        elif kind == "ref" and name.startswith("r-"):
            try:
                ref[name[2:]] = json.loads(data).get("step_ms")
            except ValueError:
                pass
    return ours, ref, order


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    results, pred_dir = argv[1], argv[2] if len(argv) > 2 else ""
    layers = argv[3] if len(argv) > 3 else "?"
    ours, ref, order = read_results(results)
    print("models-final: %s layers each (same per-layer shape as the model), seq 2048, micro-batch 1, bf16" % layers)
    print("%-12s %9s %9s %6s %9s %7s  %s" % ("row", "ours ms", "compile", "ratio", "pred ms", "error", "attention"))
    print("-" * 68)
    for n in order:
        o, r = ours[n], ref.get(n)
        pred = None
        p = os.path.join(pred_dir, "w-%s.json" % n) if pred_dir else ""
        if p and os.path.exists(p):
            try:
                pred = (json.load(open(p)).get("step") or {}).get("step_ms")
            except ValueError:
                pred = None
        ms = o["step_ms"]
        f = lambda v: "%9.1f" % v if isinstance(v, (int, float)) else "%9s" % "-"
        ratio = "%6.3f" % (ms / r) if ms and r else "%6s" % "-"
        err = "%+6.1f%%" % ((pred / ms - 1) * 100) if pred and ms else "%7s" % "-"
        print("%-12s %s %s %s %s %s  %s%s" % (n, f(ms), f(r), ratio, f(pred), err, o["attention"],
                                              "  FAILED " + o["error"] if o["error"] else ""))
    print("targets: ratio <= 1.00 (compile fused / torch.compile), prediction error within 10 %")


if __name__ == "__main__":
    main(sys.argv)
