"""The event channel of one rank and the writer of protocol events (docs/PROTOCOL.md).

Channels are those of tunebench-worker: unix:PATH (one stream connection per rank), file:PATH
(append), tcp://HOST:PORT (first line "TUNEBENCH-TOKEN <token>", core/protocol/event_token.h),
stdout, stderr, none. Each event is one JSON line written with one write loop under a lock, so the
telemetry thread's lines never interleave with the training thread's. Every event carries v, type,
trial, rank and t_us (µs since the Unix epoch, host clock).

The writer does not buffer, retry or reconnect: when the reader goes away the remaining events are
dropped and stderr says so once; the script runs on. Non-finite numbers are left out of an event
(the protocol refuses them), never written as NaN. Nothing is written after `done`, the rank's last
event, whichever thread wrote it. In a forked child (DataLoader workers) the writer is silent: only
the rank's own process speaks for the rank. The channel stays open until the process exits.
"""
import json
import math
import os
import socket
import sys
import threading
import time

PROTOCOL_VERSION = 1
CONNECT_TIMEOUT_S = 30.0


def host_now_us():
    return time.time_ns() // 1000


def log(rank, message):
    """A human-readable line on stderr (never on the event channel)."""
    sys.stderr.write(f"[tunebench-probe rank {rank}] {message}\n")
    sys.stderr.flush()


class ChannelError(Exception):
    pass


class _FdSink:
    def __init__(self, fd):
        self._fd = fd

    def write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]


class _SocketSink:
    def __init__(self, sock):
        self._sock = sock

    def write(self, data):
        self._sock.sendall(data)


class _NullSink:
    def write(self, data):
        pass


def open_channel(spec, token):
    """Opens an event channel; raises ChannelError with a sentence for stderr."""
    try:
        if spec in ("stdout", "-"):
            return _FdSink(sys.stdout.fileno())
        if spec == "stderr":
            return _FdSink(sys.stderr.fileno())
        if spec == "none":
            return _NullSink()
        if spec.startswith("file:"):
            path = spec[len("file:"):]
            return _FdSink(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644))
        if spec.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(spec[len("unix:"):])
            return _SocketSink(sock)
        if spec.startswith("tcp://"):
            return _connect_tcp(spec[len("tcp://"):], token)
    except OSError as e:
        raise ChannelError(f"cannot open the event channel {spec}: {e.strerror or e}") from e
    raise ChannelError(f"unknown event channel '{spec}' (use unix:PATH, file:PATH, tcp://HOST:PORT, stdout, "
                       "stderr or none)")


def _connect_tcp(host_port, token):
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise ChannelError(f"tcp:// needs HOST:PORT, got {host_port}")
    sock = socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S)
    sock.settimeout(None)
    sink = _SocketSink(sock)
    if token:
        sink.write(f"TUNEBENCH-TOKEN {token}\n".encode())
    return sink


def _non_finite(value):
    return isinstance(value, float) and not math.isfinite(value)


def _finite(value):
    """The event without non-finite numbers: such entries are left out."""
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items() if not _non_finite(item)}
    if isinstance(value, list):
        return [_finite(item) for item in value if not _non_finite(item)]
    return value


class EventWriter:
    def __init__(self, sink, trial, rank):
        self._sink = sink
        self._trial = trial
        self._rank = rank
        self._lock = threading.Lock()
        self._broken = False
        self._silent = False
        self._warned = set()
        os.register_at_fork(after_in_child=self._silence)

    @property
    def rank(self):
        return self._rank

    def _silence(self):
        self._silent = True

    def write(self, event_type, **fields):
        event = {"v": PROTOCOL_VERSION, "type": event_type, "trial": self._trial, "rank": self._rank,
                 "t_us": host_now_us()}
        event.update(_finite(fields))
        line = json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n"
        with self._lock:
            if self._broken or self._silent:
                return
            try:
                self._sink.write(line.encode())
            except OSError as e:
                self._broken = True
                log(self._rank, f"the event channel failed ({e}); the remaining events are lost")
            self._silent = event_type == "done"

    def log(self, message):
        self.write("log", level="info", message=message)

    def warning(self, kind, message):
        self.write("warning", kind=kind, message=message)

    def warning_once(self, kind, message):
        if (kind, message) not in self._warned:
            self._warned.add((kind, message))
            self.warning(kind, message)

    def error(self, kind, message, details=None):
        self.write("error", kind=kind, message=message, details=details or {})
