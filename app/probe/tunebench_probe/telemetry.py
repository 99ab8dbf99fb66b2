"""The `gpu` telemetry events, gpu_sample_hz per second from a daemon thread (0 = off).

A GPU rank samples its GPU through NVML (nvml.py) plus the process's CPU use and RSS, as the worker
does; a CPU rank, or a GPU rank without NVML, writes an `index: -1` sample of the process alone:
cpu_pct (100 = one core, from /proc/self/stat's utime + stime between samples) and rss_bytes.
"""
import os
import threading
import time

from tunebench_probe.device import rss_bytes

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
_MIN_RATE_WINDOW_S = 0.05  # ticks are 10 ms: a rate over a shorter window is mostly rounding


def _cpu_ticks():
    with open("/proc/self/stat") as f:
        fields = f.read().rpartition(")")[2].split()  # after the command name, which may hold spaces
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


class ProcessSampler:
    def __init__(self):
        self._last = (_cpu_ticks(), time.monotonic())

    def sample(self):
        ticks, now = _cpu_ticks(), time.monotonic()
        fields = {"rss_bytes": rss_bytes()}
        window = now - self._last[1]
        if window >= _MIN_RATE_WINDOW_S:
            fields["cpu_pct"] = 100.0 * (ticks - self._last[0]) / _TICKS_PER_S / window
            self._last = (ticks, now)
        return fields


class TelemetryThread:
    def __init__(self, writer, hz, gpu_index=-1, nvml=None, nvml_handle=None):
        self._writer = writer
        self._period_s = 1.0 / hz
        self._gpu_index = gpu_index if nvml_handle is not None else -1
        self._nvml = nvml
        self._handle = nvml_handle
        self._process = ProcessSampler()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tunebench-telemetry", daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stopping.set()
        self._thread.join(timeout=5.0)

    def _run(self):
        next_at = time.monotonic()
        while not self._stopping.is_set():
            fields = {"index": self._gpu_index}
            if self._handle is not None:
                fields.update(self._nvml.sample(self._handle))
            fields.update(self._process.sample())
            self._writer.write("gpu", **fields)
            next_at += self._period_s
            self._stopping.wait(max(0.0, next_at - time.monotonic()))
