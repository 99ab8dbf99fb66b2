#!/usr/bin/env python3
"""The table of `scripts/gpu-bench.sh models-eager`: per shape (models-final's rows, at the same
depth), the worker's eager step against PyTorch eager (scripts/pytorch_reference.py) at the same
shape in the same call, and the worker's `amp fp8` + `compile fused` step against its bf16
`compile fused` step.

Usage: models_eager_table.py results.tsv [layers]
  results.tsv: lines "worker<TAB>w-NAME[-fused|-fp8]<TAB>event log" and "ref<TAB>r-NAME<TAB>RESULT json".
  Targets (issue): eager / PyTorch eager <= 1.00; fp8 + fused / bf16 fused <= 0.85.
"""
import sys

from models_final_table import read_results


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    layers = argv[2] if len(argv) > 2 else "?"
    ours, ref, names = read_results(argv[1])
    order = []
    for name in names:  # w-ROW, w-ROW-fused, w-ROW-fp8: one row each
        base = name
        for suffix in ("-fused", "-fp8"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        if base not in order:
            order.append(base)
    print("models-eager: %s layers each (the model's per-layer shape), seq 2048, micro-batch 1" % layers)
    print("%-12s %9s %9s %6s | %9s %9s %6s" % ("row", "eager", "PyTorch", "ratio", "fused", "fp8", "ratio"))
    print("-" * 70)
    f = lambda v: "%9.1f" % v if isinstance(v, (int, float)) else "%9s" % "-"
    r3 = lambda a, b: "%6.3f" % (a / b) if a and b else "%6s" % "-"
    for n in order:
        e = ours.get(n, {}).get("step_ms")
        fu = ours.get(n + "-fused", {}).get("step_ms")
        f8 = ours.get(n + "-fp8", {}).get("step_ms")
        errors = [ours[k]["error"] for k in (n, n + "-fused", n + "-fp8") if k in ours and ours[k]["error"]]
        print("%-12s %s %s %s | %s %s %s%s" % (n, f(e), f(ref.get(n)), r3(e, ref.get(n)), f(fu), f(f8), r3(f8, fu),
                                              "  FAILED " + "; ".join(errors) if errors else ""))
    print("targets: eager / PyTorch eager <= 1.00; fp8 + fused / bf16 fused <= 0.85")


if __name__ == "__main__":
    main(sys.argv)
