"""How a script's exception ends its rank: the error kind, the exit code (core/protocol/exit_codes.h)
and the words.

Out of memory (torch.cuda.OutOfMemoryError, or the allocators' own words) is `oom`, exit 3; a
collective's failure (torch.distributed.DistBackendError on 2.x, or a RuntimeError naming NCCL or
Gloo, as 1.13 raises them) is `nccl` / `comm`, exit 4; anything else is `crash`, exit 1. The
message is "rank R: the script raised Type: <last line of the exception>", a trailing "At:" list of
Python frames left out (pybind11 appends one to an error that passed through a Python callback, as
a collective's failure does through the probe's all-reduce callback); details.traceback holds
the traceback from the script's first frame on (the probe's and runpy's frames left out), its last
16 KiB when longer.
"""
import re
import traceback

# core/protocol/exit_codes.h
EXIT_OK = 0
EXIT_CRASH = 1
EXIT_CONFIG = 2
EXIT_OOM = 3
EXIT_COMM = 4  # also the step timeout, as the worker's watchdog
EXIT_UNSUPPORTED = 5
EXIT_CHANNEL = 6
MAX_TRACEBACK_CHARS = 16 * 1024

_OOM_WORDS = ("out of memory", "can't allocate memory")
_COMM_WORDS = ("NCCL", "Gloo", "gloo", "Connection closed by peer", "Connection reset by peer")
_PYBIND_FRAME = re.compile(r"^\s+\S.*\(\d+\): \S+$")  # "  /path/file.py(49): function" under "At:"


def _is_probe_frame(frame):
    return frame.f_globals.get("__name__", "").split(".")[0] in ("runpy", "tunebench_probe")


def _script_traceback(exc):
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and _is_probe_frame(tb.tb_frame):
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "...(cut)\n" + text[-MAX_TRACEBACK_CHARS:]
    return text


def _kind_and_code(torch, exc, backend):
    text = str(exc)
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None) if torch is not None else None
    if (oom_type is not None and isinstance(exc, oom_type)) or (
            isinstance(exc, RuntimeError) and any(w in text for w in _OOM_WORDS)):
        return "oom", EXIT_OOM
    comm_type = getattr(torch.distributed, "DistBackendError", None) if torch is not None else None
    if (comm_type is not None and isinstance(exc, comm_type)) or (
            isinstance(exc, RuntimeError) and any(w in text for w in _COMM_WORDS)):
        return ("nccl" if backend == "nccl" else "comm"), EXIT_COMM
    return "crash", EXIT_CRASH


def _without_frame_list(lines):
    """The exception's lines up to a trailing pybind11 "At:" frame list, blank lines before it dropped."""
    for i, line in enumerate(lines):
        if line.strip() == "At:" and i + 1 < len(lines) and all(_PYBIND_FRAME.match(l) for l in lines[i + 1:]):
            lines = lines[:i]
            break
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def describe_exception(torch, exc, rank, backend):
    """(kind, exit code, message, details) of an exception the script raised."""
    kind, code = _kind_and_code(torch, exc, backend)
    lines = _without_frame_list(str(exc).strip().splitlines())
    said = f": {lines[-1].strip()}" if lines else ""
    message = f"rank {rank}: the script raised {type(exc).__name__}{said}"
    return kind, code, message, {"traceback": _script_traceback(exc)}
