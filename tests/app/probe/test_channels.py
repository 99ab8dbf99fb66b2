"""The event channels Tunebench listens on: a unix socket (one connection per rank, what the GUI
opens) and TCP, whose first line must carry the trial's token (core/protocol/event_token.h)."""
import json
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_harness import ProbeProcess, ProbeTestCase, main_or_skip, run_all  # noqa: E402


class Listener:
    """Accepts one connection and keeps every line it sends."""

    def __init__(self, family, address):
        self.server = socket.socket(family, socket.SOCK_STREAM)
        self.server.bind(address)
        self.server.listen(1)
        self.server.settimeout(60)
        self.lines = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        connection, _ = self.server.accept()
        with connection, connection.makefile("r", encoding="utf-8") as stream:
            self.lines = [line.rstrip("\n") for line in stream]

    def join(self):
        self._thread.join(timeout=60)
        self.server.close()


class EventChannels(ProbeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        config = {"steps": 2, "warmup": 0, "gpu_sample_hz": 0}
        unix_path = os.path.join(cls.workdir, "events.sock")
        cls.unix = Listener(socket.AF_UNIX, unix_path)
        cls.tcp = Listener(socket.AF_INET, ("127.0.0.1", 0))
        port = cls.tcp.server.getsockname()[1]
        cls.unix_run, cls.tcp_run = run_all([
            ProbeProcess(cls.workdir, "unix", config, "manual_sgd.py", ["--marker"],
                         probe_args=["--events", f"unix:{unix_path}", "--trial", "u"]),
            ProbeProcess(cls.workdir, "tcp", config, "manual_sgd.py", ["--marker"], probe_args=[],
                         extra_env={"TUNEBENCH_EVENTS": f"tcp://127.0.0.1:{port}", "TUNEBENCH_TRIAL": "t",
                                    "TUNEBENCH_EVENT_TOKEN": "s3cret"}),
        ])
        cls.unix.join()
        cls.tcp.join()

    def test_unix_socket(self):
        self.assertEqual(self.unix_run.returncode, 0, self.unix_run.describe())
        events = [json.loads(line) for line in self.unix.lines]
        self.assertEqual([e["type"] for e in events if e["type"] in ("step", "done")], ["step", "step", "done"])
        self.assertTrue(all(e["trial"] == "u" for e in events))

    def test_tcp_sends_the_token_first_and_reads_the_environment(self):
        self.assertEqual(self.tcp_run.returncode, 0, self.tcp_run.describe())
        self.assertEqual(self.tcp.lines[0], "TUNEBENCH-TOKEN s3cret")
        events = [json.loads(line) for line in self.tcp.lines[1:]]
        self.assertEqual(events[-1]["type"], "done")
        self.assertTrue(all(e["trial"] == "t" for e in events))


if __name__ == "__main__":
    main_or_skip()
