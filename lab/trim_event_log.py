"""Keeps the first steps of a worker event log (.jsonl), so that a recorded GPU run fits in
tests/data. Lines are copied byte for byte: every event before the first dropped step (hello,
model, logs, the kept steps, NVML samples) and the closing events (done, error) stay; steps with a
higher number and the NVML samples after the last kept step go. The done summary is then the full
run's, which the README next to the file says.

    python3 trim_event_log.py IN.jsonl OUT.jsonl --last-step 31
"""
import argparse, json


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--last-step", type=int, required=True, help="the highest step number kept")
    a = p.parse_args()
    lines = open(a.src).read().splitlines(keepends=True)
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            events.append(None)
    last_t = max((e["t_us"] for e in events if e and e.get("type") == "step" and e["step"] <= a.last_step), default=0)
    kept = 0
    with open(a.dst, "w") as out:
        for line, e in zip(lines, events):
            if e is None:
                continue
            t = e.get("type")
            if t == "step" and e["step"] > a.last_step:
                continue
            if t == "gpu" and e.get("t_us", 0) > last_t:
                continue
            out.write(line)
            kept += 1
    print(f"{a.dst}: {kept} of {len(lines)} lines")


if __name__ == "__main__":
    main()
