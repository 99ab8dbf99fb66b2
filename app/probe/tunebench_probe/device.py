"""Where the rank computes, as the probe sees it: the clock that times phases, a step's memory
counters, and how a loss value is read without stalling the device.

CPU: a mark is a host clock reading (µs since the epoch); memory is the process's RSS.
CUDA: a mark is a torch.cuda.Event(enable_timing=True) recorded on the current stream, read back
only once event.query() says it is done (a step or two later) and mapped onto the host clock
through one anchor event synchronised once at start:
    host_us = anchor_host_us + anchor.elapsed_time(event) * 1000.
No per-step synchronisation: a loss is copied to pinned memory asynchronously and read when its
copy is done. The CUDA classes are kept this small because only a GPU runs them
(tests/app/probe/test_cuda.py, skipped elsewhere).
"""
import os
import threading

from tunebench_probe.compat import cudnn_version_text, nccl_version_text
from tunebench_probe.events import host_now_us

_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
_statm = {"pid": None, "fd": -1}  # /proc/self/statm kept open by the process that opened it
_statm_lock = threading.Lock()


def rss_bytes():
    """The process's resident set: one pread of /proc/self/statm, kept open (every step reads it;
    opening it each time cost 20 µs). A forked child opens its own: /proc/self is the opener's."""
    pid = os.getpid()
    if _statm["pid"] != pid:
        with _statm_lock:
            if _statm["pid"] != pid:
                _statm["fd"] = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
                _statm["pid"] = pid
    return int(os.pread(_statm["fd"], 256, 0).split()[1]) * _PAGE_BYTES


def physical_memory_bytes():
    return os.sysconf("SC_PHYS_PAGES") * _PAGE_BYTES


class ReadyValue:
    """A loss already on the host."""

    def __init__(self, value):
        self.value = value

    def is_done(self):
        return True

    def wait(self):
        pass


class HostClock:
    def mark(self):
        return host_now_us()

    def is_done(self, mark):
        return True

    def resolver(self, base):
        return lambda mark: mark

    def wait(self, mark):
        pass

    def capturing(self):
        return False


class CpuDevice:
    kind = "cpu"
    index = -1

    def __init__(self):
        self.clock = HostClock()
        self._peak_bytes = 0

    def memory(self):
        rss = rss_bytes()
        self._peak_bytes = max(self._peak_bytes, rss)
        return {"allocated_bytes": rss, "reserved_bytes": rss, "peak_bytes": self._peak_bytes}

    def read_loss(self, loss):
        return ReadyValue(float(loss.detach()))

    def facts(self):
        return {"device": "cpu", "device_kind": "cpu", "device_memory_bytes": physical_memory_bytes(),
                "cuda": "", "cudnn": "", "nccl": ""}


# ---- CUDA ------------------------------------------------------------------------------------


class CudaEventClock:
    """Marks on the rank's device's current stream, named explicitly: collectives end on other threads
    (a CUDA future's callback runs with its own stream current), whose current device may differ."""

    def __init__(self, torch, index):
        self._cuda = torch.cuda
        self._index = index
        self._anchor = self.mark()
        self._anchor.synchronize()  # the one synchronisation of the run
        self._anchor_us = host_now_us()

    def mark(self):
        # blocking: the writer thread's wait for a step sleeps instead of spinning a core
        event = self._cuda.Event(enable_timing=True, blocking=True)
        event.record(self._cuda.current_stream(self._index))
        return event

    def is_done(self, mark):
        return mark.query()

    def resolver(self, base):
        # A step's marks are read relative to its start: elapsed_time is a float of milliseconds,
        # too coarse for microseconds far from the anchor.
        base_us = self._anchor_us + self._anchor.elapsed_time(base) * 1000.0
        return lambda mark: int(round(base_us + base.elapsed_time(mark) * 1000.0))

    def wait(self, mark):
        mark.synchronize()

    def capturing(self):
        return self._cuda.is_current_stream_capturing()  # no event may be recorded into a graph capture


class PinnedLossCopy:
    def __init__(self, torch, loss):
        self._host = torch.empty((), dtype=loss.dtype, pin_memory=True)
        self._host.copy_(loss.detach().reshape(()), non_blocking=True)
        self._copied = torch.cuda.Event(blocking=True)
        self._copied.record(torch.cuda.current_stream(loss.device))

    def is_done(self):
        return self._copied.query()

    def wait(self):
        self._copied.synchronize()

    @property
    def value(self):
        return float(self._host)


class CudaDevice:
    kind = "cuda"

    def __init__(self, torch):
        self._torch = torch
        self.index = torch.cuda.current_device()
        self.clock = CudaEventClock(torch, self.index)

    def memory(self):
        # One read of the allocator's counters: memory_allocated(), memory_reserved() and
        # max_memory_allocated() each build and flatten all of them (memory_stats()), four times
        # the cost in every step.
        stats = self._torch.cuda.memory_stats_as_nested_dict(self.index)

        def counter(name, which):
            return stats.get(name, {}).get("all", {}).get(which, 0)
        return {"allocated_bytes": counter("allocated_bytes", "current"),
                "reserved_bytes": counter("reserved_bytes", "current"),
                "peak_bytes": counter("allocated_bytes", "peak"),
                "alloc_retries": stats.get("num_alloc_retries", 0)}

    def read_loss(self, loss):
        if not loss.is_cuda:
            return ReadyValue(float(loss.detach()))
        return PinnedLossCopy(self._torch, loss)

    def facts(self):
        torch = self._torch
        return {"device": torch.cuda.get_device_name(self.index), "device_kind": "cuda",
                "device_memory_bytes": torch.cuda.get_device_properties(self.index).total_memory,
                "cuda": torch.version.cuda or "", "cudnn": cudnn_version_text(torch),
                "nccl": nccl_version_text(torch)}
