"""Summary table of a scripts/gpu-bench.sh run: worker event logs next to PyTorch reference
results. Usage: gpu_table.py results.tsv. Pairs w-NAME with r-NAME for the step-time ratio."""
import json, os, shutil, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_events(path):
    """The events of a worker log, skipping lines that are not JSON."""
    with open(path) as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def find_cli():
    """tunebench-cli: $TUNEBENCH_CLI, this tree's build, the packed CLI gpu-bench.sh unpacks, or PATH."""
    for c in (os.environ.get("TUNEBENCH_CLI"), os.path.join(ROOT, "build/app/cli/tunebench-cli"),
              "/tmp/clibundle/run-cli.sh", shutil.which("tunebench-cli")):
        if c and os.access(c, os.X_OK):
            return c
    return None


def predicted_peak_bytes(path, model):
    """The memory model's peak for the trial of a worker log. Workers before issue 42 wrote it into
    the model event (predicted_peak_bytes); since then the benchmark predicts nothing and the field
    is 0, so the prediction is asked of `tunebench-cli accuracy` (the log's own config and GPU).
    None when neither has it (no CLI here: run the table again where one is built)."""
    if (model or {}).get("predicted_peak_bytes", 0) > 0:
        return model["predicted_peak_bytes"]
    cli = find_cli()
    if not cli:
        return None
    try:
        rows = json.loads(subprocess.run([cli, "accuracy", "--json", path], capture_output=True, text=True,
                                         timeout=120).stdout or "[]")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    for r in rows:
        if r.get("case") == "memory" and r.get("unit") == "GiB":
            return r["predicted"] * 2**30
    return None


def worker_row(name, path):
    done, model, hello, steps, probes = {}, None, None, {}, []
    try:
        for e in read_events(path):
            r = e.get("rank", 0)
            if e["type"] == "done":
                done[r] = e
            elif e["type"] == "model":
                model = e
            elif e["type"] == "hello":
                hello = e
            elif e["type"] == "step" and not e.get("warmup"):
                steps.setdefault(r, []).append(e)
            elif e["type"] == "probe" and e.get("rank", 0) == 0:
                probes.append(e)
            elif e["type"] == "error":
                return dict(name=name, error=e["kind"] + ": " + e["message"][:90])
    except OSError as err:
        return dict(name=name, error=str(err))
    if 0 not in done or done[0]["exit_code"] != 0:
        return dict(name=name, error="no done event" if 0 not in done else "exit %d" % done[0]["exit_code"])
    if probes:  # a link probe: its bus bandwidth at 1 MiB, 32 MiB and the largest size
        pick = [p for p in probes if p["bytes"] in (1 << 20, 1 << 25)] + probes[-1:]
        return dict(name=name, probe=", ".join("%d MiB %.0f GB/s" % (p["bytes"] >> 20, p["busbw_gbps"]) for p in pick))
    s = done[0]["summary"]
    world = hello["world_size"] if hello else 1
    peak = max(d["summary"]["peak_bytes"] for d in done.values())
    st = steps.get(0, [])
    med = lambda k: statistics.median([x[k] for x in st]) if st else 0.0
    return dict(name=name, world=world, step_ms=s["step_ms_median"], tok_gpu=s["tokens_per_s"],
                mfu=s["mfu"], peak_gib=peak / 2**30, exposed_ms=med("exposed_comm_ms"),
                comm_ms=med("comm_ms"), busbw=med("busbw_gbps"),
                predicted_gib=(lambda b: b / 2**30 if b else None)(predicted_peak_bytes(path, model)))


def ref_row(name, j):
    r = json.loads(j)
    return dict(name=name, world=r["world"], step_ms=r["step_ms"], tok_gpu=r["tok_s_gpu"], mfu=r["mfu"],
                peak_gib=r["peak_gib"], exposed_ms=None, comm_ms=None, busbw=None, predicted_gib=None)


def main():
    rows = []
    for line in open(sys.argv[1]):
        kind, name, data = line.rstrip("\n").split("\t", 2)
        rows.append(worker_row(name, data) if kind == "worker" else ref_row(name, data))
    by = {r["name"]: r for r in rows}
    hdr = "%-24s %5s %9s %9s %6s %8s %8s %9s %8s %8s" % (
        "run", "gpus", "step ms", "tok/s/gpu", "MFU%", "peakGiB", "predGiB", "exposedms", "busGB/s", "vs ref")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if "error" in r:
            print("%-24s FAILED %s" % (r["name"], r["error"]))
            continue
        if "probe" in r:
            print("%-24s probe: all-reduce busbw %s" % (r["name"], r["probe"]))
            continue
        ratio = ""
        if r["name"].startswith("w-"):
            ref = by.get("r-" + r["name"][2:]) or by.get("r-" + r["name"][2:].rsplit("-", 1)[0])
            if ref and "error" not in ref and ref["step_ms"]:
                ratio = "%.3f" % (r["step_ms"] / ref["step_ms"])
        f = lambda v, fmt: (fmt % v) if isinstance(v, (int, float)) else "-"
        print("%-24s %5s %9.1f %9.0f %6s %8.1f %8s %9s %8s %8s" % (
            r["name"], r["world"], r["step_ms"], r["tok_gpu"], f(r["mfu"] * 100 if r["mfu"] >= 0 else None, "%.1f"),
            r["peak_gib"], f(r["predicted_gib"], "%.1f"), f(r["exposed_ms"], "%.1f"), f(r["busbw"], "%.0f"), ratio))


if __name__ == "__main__":
    main()
