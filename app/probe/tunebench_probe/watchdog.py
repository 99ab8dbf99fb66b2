"""The step watchdog: no step within step_timeout_s of the start, or since the last step, ends the
rank (recorder steps count; so does the marker). A hung script must not keep its rank alive, so the
callback it runs ends the process (run.py: error `timeout`, done 4, os._exit).

It only watches the clock; it never interrupts the script's thread.
"""
import threading
import time


class StepWatchdog:
    def __init__(self, timeout_s, on_timeout):
        self._timeout_s = timeout_s
        self._on_timeout = on_timeout  # called on the watchdog's thread with the last step's index or None
        self._last_seen = time.monotonic()
        self._last_step = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tunebench-watchdog", daemon=True)

    def start(self):
        """Starts the clock: the script's first line runs next."""
        self._last_seen = time.monotonic()
        self._thread.start()

    def step_seen(self, index):
        self._last_seen = time.monotonic()
        self._last_step = index

    def stop(self):
        self._stopping.set()

    def _run(self):
        while not self._stopping.is_set():
            remaining = self._last_seen + self._timeout_s - time.monotonic()
            if remaining <= 0:
                self._on_timeout(self._last_step)
                return
            self._stopping.wait(remaining)
