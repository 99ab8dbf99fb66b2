"""A finished step -> the protocol's `step` event, and the `done` summary over the measured steps.

Lane rules (docs/PROTOCOL.md: every interval lies inside its step and intervals of one lane never
overlap): an interval is clipped to its step. On the host and compute lanes an interval that starts
before the previous one ended starts at that end (a phase nested in another of its lane is refused
when it begins), and one left empty is dropped; so their phases add up to at most the step. On the
comm lane collectives may really overlap (Gloo runs two at once; a CUDA start event is recorded
before the previous bucket's end): in the order they complete, each starts at the later of the
previous one's end and the earliest start among those not yet placed, so the lane's union is still
the time some collective was in flight and every collective keeps its interval.

The figures follow core/metrics: comm_ms is the union of the comm lane, exposed_comm_ms the part of
it no compute interval covers, busbw the nccl-tests bus bandwidth (all-reduce: x 2(n-1)/n), the
step's busbw the bytes-weighted mean; percentiles interpolate linearly (numpy's default).
"""
import math

LANES = ("host", "compute", "comm")


def _tidy_lane(intervals, start_us, end_us):
    kept = []
    previous_end = start_us
    for interval in sorted(intervals, key=lambda i: i["start_us"]):
        begin = max(interval["start_us"], previous_end)
        finish = min(interval["end_us"], end_us)
        if finish <= begin:
            continue
        interval["start_us"], interval["end_us"] = begin, finish
        kept.append(interval)
        previous_end = finish
    return kept


def _tidy_comm_lane(intervals, start_us, end_us):
    clipped = []
    for interval in intervals:
        interval["start_us"] = max(interval["start_us"], start_us)
        interval["end_us"] = min(interval["end_us"], end_us)
        if interval["end_us"] > interval["start_us"]:
            clipped.append(interval)
    clipped.sort(key=lambda i: i["end_us"])
    earliest_from = [0] * len(clipped)  # earliest start among clipped[k:]
    earliest = end_us
    for k in range(len(clipped) - 1, -1, -1):
        earliest = min(earliest, clipped[k]["start_us"])
        earliest_from[k] = earliest
    kept = []
    previous_end = start_us
    for k, interval in enumerate(clipped):
        begin = max(previous_end, earliest_from[k])
        if interval["end_us"] <= begin:  # ends together with the previous one
            continue
        interval["start_us"] = begin
        kept.append(interval)
        previous_end = interval["end_us"]
    return kept


def _uncovered_us(spans, cover):
    """Time of `spans` outside every span of `cover` (both lists non-overlapping)."""
    total = 0
    for interval in spans:
        length = interval["end_us"] - interval["start_us"]
        for c in cover:
            length -= max(0, min(interval["end_us"], c["end_us"]) - max(interval["start_us"], c["start_us"]))
        total += length
    return total


def all_reduce_busbw_gbps(nbytes, duration_us, world_size):
    if nbytes <= 0 or duration_us <= 0 or world_size < 2:
        return 0.0
    return nbytes / duration_us / 1e3 * 2.0 * (world_size - 1) / world_size


def step_fields(record, clock, warmup, world_size, not_before_us=None):
    """The `step` event's fields of a finished step (every mark done). `not_before_us`: the previous
    step's end; a step starting at that mark can read a microsecond earlier (each step's marks are
    read relative to its own start, and CUDA's elapsed times are rounded), never before it."""
    resolve = clock.resolver(record.start)
    start_us = resolve(record.start)
    if not_before_us is not None:
        start_us = max(start_us, not_before_us)
    end_us = max(start_us, resolve(record.end))
    by_lane = {lane: [] for lane in LANES}
    for interval in record.intervals:
        if interval.end is None:  # cut off by the end of the run
            continue
        item = {"lane": interval.lane, "phase": interval.phase,
                "start_us": resolve(interval.start), "end_us": resolve(interval.end)}
        if interval.label:
            item["label"] = interval.label
        if interval.nbytes:
            item["bytes"] = interval.nbytes
        by_lane[interval.lane].append(item)
    lanes = {lane: (_tidy_comm_lane if lane == "comm" else _tidy_lane)(items, start_us, end_us)
             for lane, items in by_lane.items()}
    comm_bytes = 0
    weighted_busbw = 0.0
    for item in lanes["comm"]:
        item["busbw_gbps"] = all_reduce_busbw_gbps(item.get("bytes", 0), item["end_us"] - item["start_us"], world_size)
        comm_bytes += item.get("bytes", 0)
        weighted_busbw += item["busbw_gbps"] * item.get("bytes", 0)
    fields = {
        "step": record.index,
        "warmup": record.index < warmup,
        "start_us": start_us,
        "end_us": end_us,
        "step_ms": (end_us - start_us) / 1000.0,
        "tokens": record.tokens,
        "memory": record.memory,
        "comm_ms": sum(i["end_us"] - i["start_us"] for i in lanes["comm"]) / 1000.0,
        "exposed_comm_ms": _uncovered_us(lanes["comm"], lanes["compute"]) / 1000.0,
        "busbw_gbps": weighted_busbw / comm_bytes if comm_bytes else 0.0,
        "intervals": [item for lane in LANES for item in lanes[lane]],
    }
    losses = [reading.value for reading in record.losses]
    losses = [value for value in losses if math.isfinite(value)]
    if losses:
        fields["loss"] = sum(losses) / len(losses)
    return fields


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def done_summary(measured_steps, peak_bytes):
    """The `done` summary over the measured steps' fields (this rank's, as the worker's)."""
    summary = {"measured_steps": len(measured_steps), "peak_bytes": peak_bytes, "mfu": -1.0}
    if not measured_steps:
        return summary
    step_ms = [s["step_ms"] for s in measured_steps]
    median_ms = percentile(step_ms, 0.5)
    median_tokens = percentile([s["tokens"] for s in measured_steps], 0.5)
    data_wait_ms = [sum(i["end_us"] - i["start_us"] for i in s["intervals"] if i["phase"] == "data_wait") / 1000.0
                    for s in measured_steps]
    summary.update({
        "step_ms_median": median_ms,
        "step_ms_p25": percentile(step_ms, 0.25),
        "step_ms_p75": percentile(step_ms, 0.75),
        # analysis::trial_tokens_per_s: the median step's work over the median step time
        "tokens_per_s": median_tokens / (median_ms / 1000.0) if median_ms > 0 else 0.0,
        "comm_ms_median": percentile([s["comm_ms"] for s in measured_steps], 0.5),
        "exposed_comm_ms_median": percentile([s["exposed_comm_ms"] for s in measured_steps], 0.5),
        "data_wait_ms_median": percentile(data_wait_ms, 0.5),
    })
    if "loss" in measured_steps[-1]:
        summary["final_loss"] = measured_steps[-1]["loss"]
    return summary


class StepWriter:
    """Writes each finished step (hello and model first) and keeps the measured ones for `done`."""

    def __init__(self, writer, clock, warmup, world_size, announce, trace_for=None, facts=None):
        self._writer = writer
        self._facts = facts  # hello.RunFacts: what the script's batches count in
        self._trace_for = trace_for  # step index -> its kernel-sample trace (kernel_sampler.py) or None
        self._clock = clock
        self._warmup = warmup
        self._world_size = world_size
        self._announce = announce
        self._last_end_us = None
        self.measured = []

    def write(self, record):
        fields = step_fields(record, self._clock, self._warmup, self._world_size, self._last_end_us)
        self._last_end_us = fields["end_us"]
        trace = self._trace_for(record.index) if self._trace_for is not None else None
        if trace:
            fields["kernel_trace"] = trace
        if self._facts is not None and self._facts.observed.get("script_batch_unit") == "samples":
            # Batches that are not token sequences (a CNN's images): a step carries no tokens; the
            # trial's samples per step (config samples_per_step, known from the first step written,
            # before hello) give its samples/s, as for an imported CNN trace (analysis/throughput.h).
            self._facts.observed.setdefault("samples_per_step", fields["tokens"])
            fields["tokens"] = 0
        self._announce()
        self._writer.write("step", **fields)
        if not fields["warmup"]:
            self.measured.append(fields)
