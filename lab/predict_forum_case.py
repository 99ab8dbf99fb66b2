#!/usr/bin/env python3
"""The forum's case in numbers (docs/ANALYSIS.md): 7B and 1B on two RTX 4090s without peer-to-peer.
Every figure is a prediction of `tunebench-cli predict` (calibrated on the H200 session, efficiencies
transferred to the 4090); nothing here is measured on a 4090.

Usage: lab/predict_forum_case.py build/app/cli/tunebench-cli [sessions/h200-7b.tbsession]"""
import json
import subprocess
import sys

CLI = sys.argv[1]
EVIDENCE = sys.argv[2] if len(sys.argv) > 2 else "sessions/h200-7b.tbsession"
GIB = 1024 ** 3


def predict(model, strategy, gpus, ckpt, amp, micro_batch, link="pcie4-nop2p", extra=()):
    args = [CLI, "predict", "--preset", "7b-single", "--gpu", "rtx4090", "--gpus", str(gpus), "--link", link,
            "--evidence", EVIDENCE, "--json", "--set", "model=" + model, "--set", "strategy=" + strategy,
            "--set", "checkpointing=" + ("true" if ckpt else "false"), "--set", "amp=" + amp,
            "--set", "micro_batch=%d" % micro_batch, *extra]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def row(model, strategy, gpus, ckpt, amp, mb, link="pcie4-nop2p", extra=()):
    p = predict(model, strategy, gpus, ckpt, amp, mb, link, extra)
    m, s = p["memory"], p["step"]
    fit = m["fit"]
    cells = [model, strategy if gpus > 1 else "single", "on" if ckpt else "off", amp, str(mb),
             "%.1f / %.1f GiB" % (m["peak_bytes"] / GIB, m["device_needed_bytes"] / GIB), fit]
    if s:
        cells += ["%.0f" % s["step_ms"], "{:,.0f}".format(s["tokens_per_s_total"]),
                  "%.0f" % s["exposed_comm_ms"] if gpus > 1 else "–",
                  "%.2fx" % p["scaling"]["speedup"] if p["scaling"] else "–"]
    else:
        cells += ["–"] * 4
    print("| " + " | ".join(cells) + " |")


print("| model | strategy | checkpointing | precision | micro-batch | peak / needed per GPU | on 24 GiB | step ms | tokens/s (all GPUs) | exposed comm ms | vs one GPU |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for model, mb in (("7b", 1), ("1b", 1), ("1b", 4)):
    for ckpt in (False, True):
        for amp in ("bf16", "pure-bf16"):
            row(model, "single", 1, ckpt, amp, mb)
            row(model, "ddp", 2, ckpt, amp, mb)
            row(model, "fsdp", 2, ckpt, amp, mb)
