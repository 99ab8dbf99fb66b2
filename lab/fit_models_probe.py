#!/usr/bin/env python3
"""Fit the step predictor's shape constants to a models-probe measurement (lab/models_probe.py).

Input: the probe's output (the "PROBE {...}" lines of `scripts/gpu-bench.sh models-probe`, or the bare
JSON lines as committed in tests/data/probes/h200-models-probe.jsonl). Output: the catalogue
constants (core/hardware/hardware_catalogue.json, "constants") that core/predict reads:

  attention_tflops_<kernel>_<mha|gqa>_hd<N>  measured forward+backward TFLOP/s of the SDPA kernel
      (cudnn, flash, efficient) when handed head size N (a multiple of 8; head size 100 is measured
      padded to 104 and counted here at 104), bf16, 32 query heads, 2,048 tokens, causal; mha: as many
      key/value heads as query heads, gqa: 4 query heads per key/value head. A kernel that could not
      run the shape has no constant (core/predict then never picks it there).
  gemm_tile_m, gemm_tile_n, gemm_k_overhead, gemm_wave_weight, gemm_fixed_gflop, matmul_efficiency:
      core/predict/gemm_shape.cpp's model of a GEMM's speed by its sizes, least squares on the log of
      the measured TFLOP/s of every GEMM of every probed model (a grid search; no numpy needed).

Usage:
  python3 lab/fit_models_probe.py tests/data/probes/h200-models-probe.jsonl            # print
  python3 lab/fit_models_probe.py tests/data/probes/h200-models-probe.jsonl --write \
      core/hardware/hardware_catalogue.json --source "docs/BENCHMARKS.md, \\"...\\""          # update
The same input gives the same constants (deterministic grid).
"""
import argparse, json, math, re, sys

KERNELS = ("cudnn", "flash", "efficient")
# bf16 GEMMs of the 7B step at 2,048 tokens inside training steps: 0.79 of the H200's peak, measured
# 2026-11-30 (docs/BENCHMARKS.md, "GEMMs, fp8 and DDP levers"); the probe's bare torch.mm loop runs
# a little slower, so the level comes from there and only the shape dependence from the probe.
SEVEN_B_GEMM_PEAK_FRACTION = 0.79
# Constants of the assumed head-size model that the measured table replaces.
OBSOLETE = ("attention_softmax_flops", "attention_flash_relative", "attention_efficient_relative")


def read_probe(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("PROBE "):
                line = line[len("PROBE "):]
            if not line.startswith("{"):
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def fit_attention(rows):
    """{constant name: TFLOP/s at the handed head size}: one per (kernel, grouping, handed size)."""
    out = {}
    for r in rows:
        if r.get("probe") != "sdpa" or r.get("dtype") != "bfloat16" or r.get("backend") not in KERNELS:
            continue
        if "tflops" not in r:
            continue
        hd = r["head_dim"]
        handed = r["padded"] or hd
        if handed % 8:  # PyTorch pads these itself (with copies); the worker always hands a multiple of 8
            continue
        grouping = "mha" if r["kv_heads"] == r["heads"] else "gqa"
        # the probe counts the useful FLOPs (head size hd); the kernel computes handed columns
        out["attention_tflops_%s_%s_hd%d" % (r["backend"], grouping, handed)] = round(r["tflops"] * handed / hd, 1)
    return dict(sorted(out.items()))


# core/predict/gemm_shape.cpp, the same formula (keep the two in step).
def grid_factor(m, n, sms, tm, tn, ww):
    ta, tb = math.ceil(m / tm), math.ceil(n / tn)
    pad = m * n / (ta * tm * tb * tn)
    tiles = ta * tb
    fill = tiles / (math.ceil(tiles / sms) * sms)
    return pad * (1 - ww * (1 - fill))


def shape_factor(m, n, k, sms, tm, tn, k0, ww, fixed_gflop):
    def raw(m, n, k):
        grid = max(grid_factor(m, n, sms, tm, tn, ww), grid_factor(n, m, sms, tm, tn, ww))
        work = 2 * m * n * k / 1e9
        return grid * k / (k + k0) * work / (work + fixed_gflop)
    return min(1.0, raw(m, n, k) / raw(8192, 8192, 8192))


# The fixed cost per GEMM is seen only through GEMMs of 2,048 tokens. The first probe (2026-12-02)
# timed one torch.mm between two events and so counted the host's launch from Python; unbounded, the
# fit put 16 GFLOP (~23 us) there. The probe now times 10 calls per pair of events, and the fit on it
# chooses 4 GFLOP unbounded (rms 0.063). The bound stays as a guard: the tiny model's `compile
# fused+graph` step on the same H200 kept the GPU busy 0.59 ms (1.19 ms step;
# docs/history/benchmarks-2026-12.md, "Native trials: kernel sampling (run 1") for ~100 GEMMs and every other kernel, so at most ~6 us, about 4 GFLOP at
# a large GEMM's rate.
MAX_FIXED_GFLOP = 4.0


def fit_gemm(rows, peak_tflops, sms=132):
    g = [r for r in rows if r.get("probe") == "gemm" and "tflops" in r]
    if not g:
        return {}, None
    best = None
    for tm in (64, 128, 256):
        for tn in (64, 128, 256):
            if tn < tm:
                continue
            for k0 in (0, 32, 64, 96, 128, 192, 256, 384):
                for ww in (0.0, 0.25, 0.5, 0.75, 1.0):
                    for fixed in (f for f in (0.0, 1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0) if f <= MAX_FIXED_GFLOP):
                        f = [shape_factor(r["m"], r["n"], r["k"], sms, tm, tn, k0, ww, fixed) for r in g]
                        # best scale in log space: mean of log(measured / factor)
                        logs = [math.log(r["tflops"] / fi) for r, fi in zip(g, f)]
                        s = sum(logs) / len(logs)
                        err = sum((x - s) ** 2 for x in logs)
                        if best is None or err < best[0]:
                            best = (err, tm, tn, k0, ww, fixed, math.exp(s))
    err, tm, tn, k0, ww, fixed, large = best
    rms = math.sqrt(err / len(g))
    consts = {"gemm_tile_m": tm, "gemm_tile_n": tn, "gemm_k_overhead": k0, "gemm_wave_weight": ww,
              "gemm_fixed_gflop": fixed}
    # matmul_efficiency is a large GEMM's peak fraction: the 7B training GEMMs' measured fraction
    # (SEVEN_B_GEMM_PEAK_FRACTION) divided by what this model makes of their shapes.
    seven_b = [r for r in g if r.get("model") == "7b"]
    if seven_b:
        flops = sum(2 * r["m"] * r["n"] * r["k"] for r in seven_b)
        ideal = sum(2 * r["m"] * r["n"] * r["k"] / shape_factor(r["m"], r["n"], r["k"], sms, tm, tn, k0, ww, fixed)
                    for r in seven_b)
        consts["matmul_efficiency"] = round(SEVEN_B_GEMM_PEAK_FRACTION / (flops / ideal), 3)
    return consts, dict(rms_log_error=round(rms, 4), large_gemm_tflops_this_probe=round(large, 1),
                        large_gemm_peak_fraction_this_probe=round(large / peak_tflops, 3), gemms=len(g))


def h200_peak(catalogue_path):
    try:
        with open(catalogue_path) as f:
            cat = json.load(f)
        return next(g["bf16_tflops"] for g in cat["gpus"] if g["id"] == "h200")
    except (OSError, StopIteration, KeyError, json.JSONDecodeError):
        return 989.4


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("probe", help="models-probe output or its JSON lines")
    p.add_argument("--write", metavar="CATALOGUE", help="update these constants in the catalogue JSON in place")
    p.add_argument("--source", default="docs/BENCHMARKS.md", help="where the measurement is written up")
    p.add_argument("--catalogue", default="core/hardware/hardware_catalogue.json", help="for the H200's bf16 peak")
    a = p.parse_args(argv)
    rows = read_probe(a.probe)
    if not rows:
        sys.exit("%s: no probe lines (PROBE {...} or JSON objects)" % a.probe)
    att = fit_attention(rows)
    gemm, stats = fit_gemm(rows, h200_peak(a.write or a.catalogue))
    if not att and not gemm:
        sys.exit("%s: neither SDPA nor GEMM measurements" % a.probe)
    print(json.dumps(dict(attention=att, gemm=gemm, gemm_fit=stats), indent=1))
    if a.write:
        text = open(a.write).read()
        doc = json.loads(text)
        consts = doc["constants"]
        # the table replaces the earlier assumed head-size model
        for name in [n for n in consts if n.startswith("attention_tflops_") or n in OBSOLETE]:
            del consts[name]
        measured = "measured on the project's H200 by scripts/gpu-bench.sh models-probe, fitted by " \
                   "lab/fit_models_probe.py from %s (%s)" % (a.probe, a.source)
        for name, v in att.items():
            consts[name] = {"value": v, "source": measured}
        if "attention_tflops_cudnn_mha_hd128" in att:
            peak = h200_peak(a.write)
            consts["attention_efficiency"] = {
                "value": round(att["attention_tflops_cudnn_mha_hd128"] / peak, 3),
                "source": "cuDNN at head size 128 (attention_tflops_cudnn_mha_hd128) over the H200's bf16 peak %.1f; " % peak
                          + measured + "; scaled with the calibrated matmul efficiency"}
        if gemm:
            fit = "%s; rms error of log TFLOP/s %.3f over %d GEMMs, a large GEMM %.0f TFLOP/s" % (
                measured, stats["rms_log_error"], stats["gemms"], stats["large_gemm_tflops_this_probe"])
            for name, v in gemm.items():
                consts[name] = {"value": v, "source": "fitted: " + fit}
            if "matmul_efficiency" in gemm:
                consts["matmul_efficiency"]["source"] = (
                    "a large GEMM's peak fraction: the 7B step's bf16 GEMMs at 2,048 tokens ran at %.2f of the peak "
                    "inside training steps (measured 2026-11-30, docs/BENCHMARKS.md, \"GEMMs, fp8 and DDP levers\"), "
                    "divided by their shape factor under the fitted gemm_* constants (%s); replaced by the device's "
                    "calibration when a session has trials on it" % (SEVEN_B_GEMM_PEAK_FRACTION, a.source))
        # One constant a line, as the file is kept.
        lines = ['    %s: %s' % (json.dumps(k), json.dumps(v, ensure_ascii=False)) for k, v in consts.items()]
        head, _, _ = text.partition('  "constants": {')
        with open(a.write, "w") as f:
            f.write(head + '  "constants": {\n' + ",\n".join(lines) + "\n  }\n}\n")
        json.load(open(a.write))  # still valid
        print("wrote %d constants to %s" % (len(att) + len(gemm), a.write), file=sys.stderr)


if __name__ == "__main__":
    main()
