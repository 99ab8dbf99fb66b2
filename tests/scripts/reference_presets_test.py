#!/usr/bin/env python3
"""The PyTorch reference (scripts/pytorch_reference.py) and the worker (core/config presets, listed
by `tunebench-cli presets --json`) must describe the same networks: every preset on both sides,
with the same dims and the same parameter count (each side counts its own: the script from its
shapes, the CLI through core/predict's model layout). Covers whatever presets exist on either side.

The script is run with a `torch` on its path that fails to import: listing presets must not need it.

    reference_presets_test.py TUNEBENCH_CLI SCRIPT
    reference_presets_test.py --self-test     # the comparison on made-up presets
"""
import json
import os
import subprocess
import sys
import tempfile

# What the worker does for a knob its config does not have (yet): a script value must match it.
WORKER_WITHOUT_KEY = {
    "kv_heads": lambda dims: dims["heads"],  # multi-head attention
    "tie_embeddings": lambda dims: False,     # a separate output head
    "rope_theta": lambda dims: 10000.0,       # kRopeTheta in core/engine/model/llama.cpp
}


def script_presets(script):
    with tempfile.TemporaryDirectory() as poison:
        os.makedirs(os.path.join(poison, "torch"))
        with open(os.path.join(poison, "torch", "__init__.py"), "w") as f:
            f.write("raise ImportError('--list-presets must not import torch')\n")
        env = dict(os.environ, PYTHONPATH=poison)
        out = subprocess.run([sys.executable, script, "--list-presets", "--json"], env=env,
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: {script} --list-presets --json exited {out.returncode}:\n{out.stderr}")
    return json.loads(out.stdout)["presets"]


def worker_presets(cli):
    out = subprocess.run([cli, "presets", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: {cli} presets --json exited {out.returncode}:\n{out.stderr}")
    return json.loads(out.stdout)["models"]


# The worker's config values that mean the same as the script's explicit ones.
WORKER_MEANS = {
    "kv_heads": lambda value, dims: dims["heads"] if value == 0 else value,  # 0: as many as heads
}


def compare(worker, script):
    failures = []
    for name in sorted(set(worker) - set(script)):
        failures.append(f"preset '{name}': in the worker (core/config/presets.cpp), not in scripts/pytorch_reference.py")
    for name in sorted(set(script) - set(worker)):
        failures.append(f"preset '{name}': in scripts/pytorch_reference.py, not in the worker (core/config/presets.cpp)")
    for name in sorted(set(worker) & set(script)):
        w = {k: WORKER_MEANS[k](v, worker[name]["dims"]) if k in WORKER_MEANS else v
             for k, v in worker[name]["dims"].items()}
        s = script[name]["dims"]
        for key, value in w.items():
            if key not in s:
                failures.append(f"preset '{name}': the worker has '{key}' = {value}, the script has no such dim")
            elif s[key] != value:
                failures.append(f"preset '{name}': '{key}' is {value} in the worker, {s[key]} in the script")
        for key in sorted(set(s) - set(w)):
            if key not in WORKER_WITHOUT_KEY:
                failures.append(f"preset '{name}': the script has '{key}' = {s[key]}, the worker has no such knob")
            elif s[key] != WORKER_WITHOUT_KEY[key](s):
                failures.append(f"preset '{name}': the script has '{key}' = {s[key]}; the worker has no such knob "
                                f"and runs as if it were {WORKER_WITHOUT_KEY[key](s)}")
        if worker[name]["params"] != script[name]["params"]:
            failures.append(f"preset '{name}': {worker[name]['params']:,} parameters in the worker, "
                            f"{script[name]['params']:,} in the script")
    return failures


def self_test():
    """compare() itself: each kind of difference is reported, with the preset's name."""
    dims = {"dim": 256, "layers": 4, "heads": 4, "ffn": 688, "vocab": 32000}
    same = {"tiny": {"dims": dims, "params": 100}}
    script = {"tiny": {"dims": dict(dims, kv_heads=4, tie_embeddings=False, rope_theta=10000.0), "params": 100}}
    cases = [
        ("identical", same, script, []),
        ("worker only", dict(same, extra=same["tiny"]), script, ["'extra': in the worker"]),
        ("script only", same, dict(script, gqa=script["tiny"]), ["'gqa': in scripts/pytorch_reference.py"]),
        ("dim differs", {"tiny": {"dims": dict(dims, ffn=700), "params": 100}}, script, ["'ffn' is 700"]),
        ("params differ", {"tiny": {"dims": dims, "params": 101}}, script, ["101 parameters"]),
        ("worker lacks kv_heads", same, {"tiny": {"dims": dict(script["tiny"]["dims"], kv_heads=2), "params": 100}},
         ["'kv_heads' = 2; the worker has no such knob"]),
        ("worker lacks a key", same, {"tiny": {"dims": dict(script["tiny"]["dims"], bias=True), "params": 100}},
         ["'bias' = True, the worker has no such knob"]),
        ("script lacks a key", {"tiny": {"dims": dict(dims, window=7), "params": 100}}, script, ["'window' = 7"]),
        ("worker's kv_heads 0 is heads", {"tiny": {"dims": dict(dims, kv_heads=0), "params": 100}}, script, []),
        ("worker's kv_heads differs", {"tiny": {"dims": dict(dims, kv_heads=2), "params": 100}}, script,
         ["'kv_heads' is 2 in the worker, 4 in the script"]),
    ]
    bad = 0
    for name, w, s, expected in cases:
        got = compare(w, s)
        ok = len(got) == len(expected) and all(e in g for e, g in zip(expected, got))
        print(f"{'ok' if ok else 'FAIL'}: {name}: {got}")
        bad += not ok
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    worker, script = worker_presets(sys.argv[1]), script_presets(sys.argv[2])
    for name in sorted(set(worker) | set(script)):
        print(f"{name:12} worker {worker.get(name, {}).get('params', '-'):>13}  "
              f"script {script.get(name, {}).get('params', '-'):>13}")
    failures = compare(worker, script)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print(f"{len(worker)} presets: same dims and parameter counts")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
