"""The step recorder's writing (recorder.py), with a device whose work finishes when the test says:
steps are written on the writer thread, in order and once, after the device has done them; the
script's thread runs ahead of the device until MAX_UNREAD_STEPS steps are unwritten and is never
the one that waits for a mark; a kernel-sampled window's steps wait for its trace; an ending from
another thread (the watchdog's) writes what the device has done and leaves the rest.

No torch: the recorder reads the device only through its clock and memory (device.py's shape).
"""
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, str(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "app", "probe")))
from tunebench_probe.recorder import MAX_UNREAD_STEPS, StepRecorder, StepsFinished  # noqa: E402

TIMEOUT_S = 10.0


class Mark:
    def __init__(self, clock):
        self.done = threading.Event()
        if clock.finished_device:
            self.done.set()


class HeldClock:
    """Marks finish only when release() says so (a device running behind the host)."""

    def __init__(self):
        self.finished_device = False
        self.marks = []
        self.waited_on = set()  # threads that waited for a mark
        self._lock = threading.Lock()

    def mark(self):
        m = Mark(self)
        with self._lock:
            self.marks.append(m)
        return m

    def is_done(self, mark):
        return mark.done.is_set()

    def wait(self, mark):
        self.waited_on.add(threading.get_ident())
        if not mark.done.wait(TIMEOUT_S):
            raise TimeoutError("a mark never finished")

    def finish_so_far(self):
        """The device catches up with what the host has recorded until now."""
        with self._lock:
            for m in self.marks:
                m.done.set()

    def release(self):
        with self._lock:
            self.finished_device = True
            for m in self.marks:
                m.done.set()

    def capturing(self):
        return False


class Device:
    def __init__(self):
        self.clock = HeldClock()

    def memory(self):
        return {"allocated_bytes": 1, "reserved_bytes": 2, "peak_bytes": 3}


class Sampler:
    """Steps 2 and 3 form one window; its trace is written when step 3 is sealed."""

    def __init__(self):
        self.trace_written = False

    def step_opening(self, index):
        return False

    def step_opened(self, index):
        pass

    def step_ended(self, index):
        pass

    def ready(self, index):
        return index not in (2, 3) or self.trace_written

    def window_ends_after(self, index):
        if index == 3:
            self.trace_written = True
            return True
        return False

    def finish(self):
        pass

    def abandon(self):
        pass


def one_step(recorder):
    recorder.end(recorder.begin("compute", "forward"))
    recorder.optimizer_end(recorder.optimizer_begin())


class Written:
    def __init__(self):
        self.indices = []
        self.threads = set()
        self.changed = threading.Condition()

    def __call__(self, step):
        with self.changed:
            self.indices.append(step.index)
            self.threads.add(threading.get_ident())
            self.changed.notify_all()

    def wait_for(self, count):
        with self.changed:
            return self.changed.wait_for(lambda: len(self.indices) >= count, TIMEOUT_S)


def run_script(recorder, steps, progress):
    """The script's loop on the thread that made the recorder; `progress` counts steps begun."""
    try:
        for _ in range(steps):
            one_step(recorder)
            progress.append(1)
        recorder.begin("compute", "forward")  # the activity after the last step seals it
    except StepsFinished:
        progress.append("finished")


class RecorderWriting(unittest.TestCase):
    def make(self, steps_wanted, sampler=None):
        device, written = Device(), Written()
        box = {}

        def script(steps):
            box["recorder"] = StepRecorder(device, steps_wanted, written, lambda index: None, sampler)
            box["thread"] = threading.get_ident()
            run_script(box["recorder"], steps, box.setdefault("progress", []))
        return device, written, box, script

    def test_the_script_runs_ahead_of_the_device_and_the_writer_waits_for_it(self):
        device, written, box, script = self.make(steps_wanted=100)
        thread = threading.Thread(target=script, args=(30,))
        thread.start()
        # The device has done nothing: the script runs MAX_UNREAD_STEPS sealed steps ahead (plus the
        # open one), then waits for the writer; nothing is written yet.
        deadline = time.monotonic() + TIMEOUT_S
        while len(box.get("progress", [])) < MAX_UNREAD_STEPS + 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        # Step k's first activity seals step k-1: the step after MAX_UNREAD_STEPS + 1 steps waits.
        self.assertEqual(len(box["progress"]), MAX_UNREAD_STEPS + 1, "the script waits once it is this far ahead")
        self.assertEqual(written.indices, [])
        device.clock.release()
        thread.join(TIMEOUT_S)
        self.assertFalse(thread.is_alive())
        self.assertTrue(written.wait_for(30))
        self.assertEqual(written.indices, list(range(30)), "in order, each once (step 30 is still open)")
        self.assertNotIn(box["thread"], written.threads, "steps are written off the script's thread")
        self.assertNotIn(box["thread"], device.clock.waited_on, "the script's thread never waits for a mark")

    def test_the_last_step_stops_the_script_once_every_step_is_written(self):
        device, written, box, script = self.make(steps_wanted=5)
        device.clock.release()
        script(10)
        self.assertEqual(box["progress"][-1], "finished")
        self.assertEqual(written.indices, [0, 1, 2, 3, 4], "all written before StepsFinished")

    def test_a_sampled_window_is_written_once_its_trace_is(self):
        sampler = Sampler()
        device, written = Device(), Written()
        device.clock.release()
        go_on = threading.Event()

        def script():
            recorder = StepRecorder(device, 100, written, lambda index: None, sampler)
            for _ in range(3):
                one_step(recorder)
            recorder.begin("compute", "forward")  # seals step 2, the window's first
            go_on.wait(TIMEOUT_S)
            recorder.optimizer_end(recorder.optimizer_begin())
            recorder.begin("compute", "forward")  # seals step 3: the window's trace is written

        thread = threading.Thread(target=script)
        thread.start()
        self.assertTrue(written.wait_for(2))
        time.sleep(0.2)
        self.assertEqual(written.indices, [0, 1], "step 2 waits for its window's trace")
        go_on.set()
        thread.join(TIMEOUT_S)
        self.assertTrue(written.wait_for(4))
        self.assertEqual(written.indices, [0, 1, 2, 3])

    def test_an_ending_from_another_thread_writes_what_the_device_did(self):
        device, written = Device(), Written()
        box = {}
        first_step_done, go_on = threading.Event(), threading.Event()

        def script():
            recorder = box["recorder"] = StepRecorder(device, 100, written, lambda index: None)
            one_step(recorder)
            first_step_done.set()
            go_on.wait(TIMEOUT_S)
            for _ in range(2):
                one_step(recorder)
            recorder.begin("compute", "forward")  # seals step 2; the script then hangs (returns here)

        thread = threading.Thread(target=script)
        thread.start()
        first_step_done.wait(TIMEOUT_S)
        device.clock.finish_so_far()  # the device finished step 0 only
        go_on.set()
        thread.join(TIMEOUT_S)
        sealed = box["recorder"].finish(wait_for_device=False, lock_timeout_s=2.0)
        self.assertEqual(sealed, 3)
        self.assertEqual(written.indices, [0], "only what the device finished; the writer stuck on step 1 stops")
        device.clock.release()
        time.sleep(0.2)
        self.assertEqual(written.indices, [0], "the stopped writer writes nothing after the ending")




class WhereTheScriptIs(unittest.TestCase):
    """recorder.where(), what a step timeout says (run.py): the phase the script's thread is in and
    the all-reduces it began that have not finished, by their callback (Gloo: the future never
    completes) or by their end mark on the device (NCCL: the future completes when queued)."""

    def test_a_collective_whose_callback_never_ran_is_waited_for_in_its_phase(self):
        device = Device()
        device.clock.release()
        inside, leave = threading.Event(), threading.Event()
        box = {}

        def script():
            recorder = box["recorder"] = StepRecorder(device, 100, Written(), lambda index: None)
            for _ in range(2):
                one_step(recorder)
            backward = recorder.begin("compute", "backward")
            recorder.comm_begin("bucket 0", 1024)  # its future's callback never comes
            inside.set()
            leave.wait(TIMEOUT_S)
            recorder.end(backward)

        thread = threading.Thread(target=script)
        thread.start()
        self.assertTrue(inside.wait(TIMEOUT_S))
        text, waiting = box["recorder"].where()
        leave.set()
        thread.join(TIMEOUT_S)
        self.assertTrue(waiting)
        self.assertEqual(text, "in the backward of step 2, with the all-reduce of bucket 0 begun and not finished "
                               "(waiting for another rank)")

    def test_a_collective_the_device_has_not_finished_is_waited_for_while_the_host_waits(self):
        device = Device()  # held: nothing the host records finishes on the device
        box = {}

        def script():
            recorder = box["recorder"] = StepRecorder(device, 100, Written(), lambda index: None)
            try:
                for _ in range(MAX_UNREAD_STEPS + 3):
                    recorder.end(recorder.begin("compute", "backward"))
                    recorder.comm_end(recorder.comm_begin("bucket 0", 1024))  # queued: the callback ran
                    recorder.optimizer_end(recorder.optimizer_begin())
            except StepsFinished:
                pass

        thread = threading.Thread(target=script)
        thread.start()
        deadline = time.monotonic() + TIMEOUT_S
        text, waiting = "", False
        while time.monotonic() < deadline and not text.startswith("waiting for the device"):
            time.sleep(0.05)
            text, waiting = box["recorder"].where()
        self.assertTrue(text.startswith(f"waiting for the device to finish the {MAX_UNREAD_STEPS + 1} steps it runs "
                                        "behind the host, with the all-reduce of bucket 0"), text)
        self.assertTrue(waiting)
        device.clock.release()
        thread.join(TIMEOUT_S)
        self.assertFalse(thread.is_alive())
        # Once the device has done them, nothing is waited for.
        text, waiting = box["recorder"].where()
        self.assertFalse(waiting, text)


if __name__ == "__main__":
    unittest.main()
