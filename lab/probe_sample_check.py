"""The probe's kernel-sampled steps on a GPU (scripts/gpu-bench.sh script, issue 39): GPU busy of
the sampled steps as Tunebench stores them (the probe's torch.profiler trace read by the trace
import, folded in by the runner: core/launch/kernel_traces) against the kernel union of the same
steps computed here from the same trace's raw events, and what sampling costs the steps it does not
sample.

    python3 lab/probe_sample_check.py OUT CLI
      CLI: a tunebench-cli command (the packed one: /tmp/clibundle/run-cli.sh)

For each shape of lab/probe_gpu_check.py (the user-like LLaMA script), two trials through
`CLI run --script` (Tunebench's launcher, the probe, the runner's fold), 40 steps, 5 warm-up:
sampled (kernel_sample_every 10, kernel_sample_steps 2: steps 5-6, 15-16, 25-26, 35-36) with the
traces kept (TUNEBENCH_PROBE_TRACE_DIR=OUT/sample-traces-SHAPE), and unsampled
(kernel_sample_every 0). Then, per sampled step: the stored gpu_busy_ms / step_ms against the
union of the trace's kernel, gpu_memcpy and gpu_memset events over the part of the stored step
that step's ProfilerStep#N span covers (on the host clock), in percentage points (pass: within 3);
the union over the whole ProfilerStep span is printed beside it. And the unsampled steps of the sampled
trial after its first sample against the unsampled trial's measured steps (medians): what sampling
leaves behind on the other steps (CUPTI staying attached). Writes OUT/sample-check.txt (printed).
"""
import glob
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_gpu_check import OWN_SCRIPT, SCRIPT, SHAPES  # noqa: E402

STEPS, WARMUP, EVERY, COUNT = 40, 5, 10, 2
TOLERANCE_POINTS = 3.0


def run_trial(cli, session, script, shape, every, trace_dir):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if trace_dir:
        env["TUNEBENCH_PROBE_TRACE_DIR"] = trace_dir
    args = list(SHAPES[shape])
    args[args.index("--steps") + 1] = "100000"  # the probe stops the script after STEPS
    cmd = [cli, "run", session, "--script", OWN_SCRIPT.get(shape, script), "--python", sys.executable, "--name", f"{shape} every={every}",
           "--set", f"steps={STEPS}", "--set", f"warmup={WARMUP}", "--set", f"kernel_sample_every={every}",
           "--set", f"kernel_sample_steps={COUNT}", "--"] + args
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-3000:]}")


def stored_steps(session, name):
    db = sqlite3.connect(session)
    trial = db.execute("SELECT id FROM trials WHERE name = ? ORDER BY id DESC LIMIT 1", (name,)).fetchone()[0]
    rows = db.execute("SELECT s.step, s.warmup, s.step_ms, g.gpu_busy_ms, s.start_us, s.end_us FROM steps s "
                      "LEFT JOIN step_gpu g ON g.step_id = s.id WHERE s.trial_id = ? AND s.rank = 0 ORDER BY s.step",
                      (trial,)).fetchall()
    messages = [m for (m,) in db.execute("SELECT message FROM messages WHERE trial_id = ? AND kind = 'warning'",
                                         (trial,))]
    return rows, messages


def union_us(spans):
    total, end = 0.0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def reference_busy(trace_dir, windows):
    """{step: (kernel union over the part of the stored step its ProfilerStep#N covers, in %; the same
    over the whole ProfilerStep span, in %; that span in ms)} from the traces' raw events, on the
    host clock (ts + baseTimeNanoseconds). windows: {step: (start_us, end_us)} as stored."""
    out = {}
    for path in glob.glob(os.path.join(trace_dir, "rank0-steps*.pt.trace.json")):
        trace = json.load(open(path))
        base = trace.get("baseTimeNanoseconds", 0) // 1000
        events = trace["traceEvents"]
        gpu = [(base + e["ts"], base + e["ts"] + e["dur"]) for e in events
               if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        for e in events:
            name = str(e.get("name", ""))
            # The host's span (user_annotation); Kineto also writes the step's GPU span under the same
            # name (gpu_user_annotation), which is not the step.
            if e.get("ph") != "X" or not name.startswith("ProfilerStep#") or e.get("cat") == "gpu_user_annotation":
                continue
            n = int(name.split("#")[1])
            s0, s1 = base + e["ts"], base + e["ts"] + e["dur"]

            def busy(a0, a1):
                inside = [(max(a, a0), min(b, a1)) for a, b in gpu if min(b, a1) > max(a, a0)]
                return 100.0 * union_us(inside) / (a1 - a0) if a1 > a0 else float("nan")

            w0, w1 = windows.get(n, (s0, s1))
            out[n] = (busy(max(s0, w0), min(s1, w1)), busy(s0, s1), (s1 - s0) / 1000.0)
    return out


def main():
    out, cli = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp()
    script = os.path.join(work, "train_lm.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    lines, failed = [], False
    for shape in SHAPES:
        session = os.path.join(out, f"sample-check-{shape}.tbsession")
        traces = os.path.join(out, f"sample-traces-{shape}")
        os.makedirs(traces, exist_ok=True)
        run_trial(cli, session, script, shape, EVERY, traces)
        run_trial(cli, session, script, shape, 0, "")
        sampled, messages = stored_steps(session, f"{shape} every={EVERY}")
        plain, _ = stored_steps(session, f"{shape} every=0")
        ref = reference_busy(traces, {r[0]: (r[4], r[5]) for r in sampled})
        lines.append(f"{shape}: sampled steps, GPU busy % stored (probe + import) vs kernel union of the trace")
        for message in messages:
            lines.append(f"  warning: {message}")
        busy_rows = [r for r in sampled if r[3] is not None]
        if not busy_rows:
            lines.append("  FAIL: no stored step is GPU-sampled")
            failed = True
        for step, _, step_ms, busy_ms, _, _ in busy_rows:
            stored = 100.0 * busy_ms / step_ms
            if step not in ref:
                lines.append(f"  step {step}: stored {stored:5.1f} %, no ProfilerStep#{step} in the traces: FAIL")
                failed = True
                continue
            covered, whole, span_ms = ref[step]
            ok = abs(stored - covered) <= TOLERANCE_POINTS
            failed |= not ok
            lines.append(f"  step {step:3}: stored {stored:5.1f} %  trace {covered:5.1f} %  "
                         f"diff {stored - covered:+5.1f} points  step {step_ms:.2f} ms  (ProfilerStep {span_ms:.2f} ms, "
                         f"{whole:5.1f} % over it)  {'ok' if ok else 'FAIL'}")
        first = min(r[0] for r in busy_rows) if busy_rows else WARMUP
        after = [r[2] for r in sampled if r[3] is None and not r[1] and r[0] > first + COUNT]
        base = [r[2] for r in plain if not r[1]]
        if after and base:
            lines.append(f"  unsampled steps after the first sample: median {statistics.median(after):.3f} ms vs "
                         f"{statistics.median(base):.3f} ms without sampling (ratio "
                         f"{statistics.median(after) / statistics.median(base):.4f})")
    lines.append("FAIL" if failed else f"PASS: every sampled step within {TOLERANCE_POINTS:g} points")
    text = "\n".join(lines)
    with open(os.path.join(out, "sample-check.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
