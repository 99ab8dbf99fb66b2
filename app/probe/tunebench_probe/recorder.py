"""The step recorder: turns what the hooks see into steps, and hands finished steps to the writer.

The step rule (docs/SCRIPTS.md, "Steps"):
  * A step ends when an outermost optimizer.step() returns. An optimizer.step() called inside
    another (a wrapper optimizer, LBFGS's closure, ZeroRedundancyOptimizer) is part of it.
  * Optimizer steps with no data fetch, forward, backward or host-to-device copy between them (two
    optimizers stepped in one iteration) are one step: it ends when the last of them returns. So a
    step is sealed only at the next such activity (or at the end of the run), and the next step
    starts where it ended.
  * The first step starts at the first data fetch, forward, backward or optimizer step.
  * With the marker (tunebench_probe.step_done()), the marker alone ends steps, from its first call.
  * Kernel-sampled steps (kernel_sampler.py): the profiler starts before such a step opens and stops
    when the window's last step is sealed; the step after a start or a stop starts there, not where
    the previous one ended, and a sampled step's event waits for its window's trace.
After `steps` steps, the next activity raises StepsFinished (a SystemExit with code 0) once the
steps' events are written: every rank stops the script at the same point.

Sealed steps are written by a writer thread, in order, once the device has done them (their CUDA
events are waited for there, which releases the GIL): resolving marks and encoding events stay off
the script's thread, whose per-step cost is what a short step pays (docs/SCRIPTS.md, "Overhead").
The script's thread only waits for it when the host runs MAX_UNREAD_STEPS steps ahead of what is
written, and at the end.

Phases are intervals on a lane; a phase that begins while another of its lane is active (a forward
inside LBFGS's step, a copy inside a data fetch) is not recorded. Only the script's own thread
records phases and steps; collectives may end on any thread (Gloo's, a CUDA future's callback).

It hooks nothing itself (the *_hooks modules do) and reads no clock itself (device.py's marks).
"""
import collections
import os
import threading
from dataclasses import dataclass, field

MAX_UNREAD_STEPS = 8  # when the host runs this far ahead of the written steps, the script waits


class StepsFinished(SystemExit):
    """The trial's steps are done: ends the script like sys.exit(0)."""

    def __init__(self):
        super().__init__(0)


@dataclass(eq=False)
class Interval:
    lane: str
    phase: str
    start: object
    end: object = None
    label: str = ""
    nbytes: int = 0


@dataclass(eq=False)
class StepRecord:
    index: int
    start: object
    end: object = None  # set when the step's (last) optimizer step or the marker returned
    intervals: list = field(default_factory=list)
    tokens: int = 0
    losses: list = field(default_factory=list)
    memory: dict = None
    held: bool = False  # in a kernel-sampled window whose trace is not written yet


def _marks(step):
    """The device marks a step's event is read from: its end and every phase's start and end."""
    return [step.end] + [m for i in step.intervals for m in (i.start, i.end) if m is not None]


class StepRecorder:
    def __init__(self, device, steps_wanted, write_step, step_seen, sampler=None):
        self._device = device
        self._sampler = sampler
        self._resume_at = None  # where the next step starts after the profiler stopped
        self._clock = device.clock
        self._steps_wanted = steps_wanted
        self._write_step = write_step  # called with each finished StepRecord, in order
        self._step_seen = step_seen    # called with a step's index when it ends (the watchdog)
        self._lock = threading.Lock()
        self._script_thread = threading.get_ident()
        self._forked = False
        self._script_start = self._clock.mark()
        self._open = None
        self._last_end = None
        self._sealed = 0
        self._unread = collections.deque()  # sealed, not yet written (guarded by _unread_changed)
        self._unread_changed = threading.Condition(threading.Lock())
        self._writing = threading.Lock()  # held while a step is written: one writer at a time, in order
        self._writer_thread = None
        self._writer_stopped = False
        self._writer_failure = None
        self._active = {"host": None, "compute": None}
        self._marker_mode = False
        self._finished = False
        os.register_at_fork(after_in_child=self._stop_in_child)

    def _stop_in_child(self):
        self._forked = True

    def watching(self):
        """Whether a hook firing now should record: the script's thread, not a forked DataLoader
        worker, not inside a CUDA graph capture."""
        return threading.get_ident() == self._script_thread and not self._forked and not self._clock.capturing()

    # ---- phases ---------------------------------------------------------------------------------

    def begin(self, lane, phase, opens_first_step=True):
        """Starts a phase (an activity: it may end the previous step). None when not recorded."""
        with self._lock:
            step = self._step_for_activity(opens_first_step)
            return self._begin_on(step, lane, phase)

    def end(self, interval, keep=True):
        """Ends a phase; `keep` False drops it (an interval without an end is never written)."""
        if interval is None:
            return
        mark = self._clock.mark() if keep else None
        with self._lock:
            interval.end = mark
            if self._active.get(interval.lane) is interval:
                self._active[interval.lane] = None

    def where(self):
        """Where the script's thread is now, for a timeout's message (any thread): (words, whether a
        collective it began has not finished: the rank waits for a peer). A collective is unfinished
        while its future's callback has not run (Gloo) or its end mark is not done on the device
        (NCCL, whose futures complete when the work is queued), in the running step or in the steps
        the device has not finished. When the script's thread waits for the device (the host ran
        ahead, holding the recorder's lock), it says so."""
        def unfinished(steps):
            return [i.label or i.phase for st in steps for i in st.intervals
                    if i.lane == "comm" and (i.end is None or not self._clock.is_done(i.end))]

        pending, behind = [], 0
        if self._unread_changed.acquire(timeout=1.0):
            try:
                unread = list(self._unread)
            finally:
                self._unread_changed.release()
            behind = len(unread)
            pending = unfinished(unread)
        if self._lock.acquire(timeout=1.0):
            try:
                step = self._open
                running = step is not None and step.end is None
                index = step.index if running else (step.index + 1 if step is not None else self._sealed)
                active = self._active["compute"] or self._active["host"]
                text = (f"in the {active.phase.replace('_', ' ')} of step {index}" if active is not None
                        else f"outside the phases the probe times, before step {index} ended (the script's own code)")
                pending += unfinished([step] if running else [])
            finally:
                self._lock.release()
        else:
            text = f"waiting for the device to finish the {behind} steps it runs behind the host"
        if pending:
            text += (f", with the all-reduce of {', '.join(pending[:3])}{' ...' if len(pending) > 3 else ''} "
                     "begun and not finished (waiting for another rank)")
        return text, bool(pending)

    def _begin_on(self, step, lane, phase):
        if step is None or self._active[lane] is not None:
            return None
        interval = Interval(lane, phase, self._clock.mark())
        self._active[lane] = interval
        step.intervals.append(interval)
        return interval

    def comm_begin(self, label, nbytes):
        """A collective starts (any thread); it belongs to the step running now."""
        if self._forked or self._clock.capturing():
            return None
        mark = self._clock.mark()
        with self._lock:
            if self._open is None:
                return None
            interval = Interval("comm", "all_reduce", mark, label=label, nbytes=nbytes)
            self._open.intervals.append(interval)
            return interval

    def comm_end(self, interval):
        if interval is None:
            return
        mark = self._clock.mark()
        with self._lock:
            interval.end = mark

    # ---- per-step data --------------------------------------------------------------------------

    def add_tokens(self, count):
        with self._lock:
            if self._open is not None:
                self._open.tokens += count

    def add_loss(self, loss):
        reading = self._device.read_loss(loss)
        with self._lock:
            if self._open is not None:
                self._open.losses.append(reading)

    # ---- boundaries -----------------------------------------------------------------------------

    def optimizer_begin(self):
        with self._lock:
            same_iteration = (not self._marker_mode and self._open is not None and self._open.end is not None)
            step = self._open if same_iteration else self._step_for_activity(True)
            return self._begin_on(step, "compute", "optimizer")

    def optimizer_end(self, interval):
        self.end(interval)
        with self._lock:
            if self._marker_mode or self._open is None:
                return
            self._open.end = interval.end if interval is not None else self._clock.mark()
            index = self._open.index
        self._step_seen(index)
        self._sampled_step_ended(index)

    def _sampled_step_ended(self, index):
        if self._sampler is not None:
            self._sampler.step_ended(index)

    def marker(self):
        if not self.watching():
            return
        with self._lock:
            self._raise_if_finished()
            self._marker_mode = True
            if self._open is None:
                self._open = self._new_step(self._script_start)
            self._open.end = self._clock.mark()
            index = self._open.index
            self._step_seen(index)
        self._sampled_step_ended(index)
        with self._lock:
            self._seal_and_write()

    def _raise_if_finished(self):
        if self._finished:
            raise StepsFinished()

    def _step_for_activity(self, opens_first_step):
        self._raise_if_finished()
        if self._open is not None and self._open.end is not None:
            self._seal_and_write()
        if self._open is None:
            if self._last_end is None and not opens_first_step:
                return None
            self._open = self._new_step(None)
        return self._open

    def _new_step(self, first_start):
        """The next step, starting where the previous one ended (the first: at `first_start`, or
        now), after the profiler's start or stop when a kernel sample begins or ended there."""
        index = self._sealed
        started = self._sampler is not None and self._sampler.step_opening(index)
        if started:
            start = self._clock.mark()
        elif self._resume_at is not None:
            start = self._resume_at
        elif self._last_end is not None:
            start = self._last_end
        else:
            start = first_start if first_start is not None else self._clock.mark()
        self._resume_at = None
        if self._sampler is not None:
            self._sampler.step_opened(index)
        return StepRecord(index, start)

    def _seal(self):
        step = self._open
        self._open = None
        self._last_end = step.end
        step.memory = self._device.memory()
        self._sealed += 1
        window_ended = False
        if self._sampler is not None:
            step.held = not self._sampler.ready(step.index)
            if self._sampler.window_ends_after(step.index):
                self._resume_at = self._clock.mark()  # the profiler stopped: the next step starts now
                window_ended = True
        with self._unread_changed:
            self._unread.append(step)
            if window_ended:
                self._release_held()
            self._unread_changed.notify_all()
        self._start_writer()

    def _release_held(self):
        """The sampled window's trace is written (or given up): its steps may be written."""
        for step in self._unread:
            step.held = False

    def _seal_and_write(self):
        """Seals the open step on the script's thread; after the last, stops the script once every
        step is written."""
        self._seal()
        if self._sealed >= self._steps_wanted:
            self._finished = True
            self._flush()
            raise StepsFinished()
        self._keep_up()

    # ---- writing (the writer thread) ------------------------------------------------------------

    def _start_writer(self):
        if self._writer_thread is None:
            self._writer_thread = threading.Thread(target=self._write_loop, name="tunebench-steps", daemon=True)
            self._writer_thread.start()

    def _writable(self):
        """Whether the oldest unread step may be written (its window's trace is done); under the lock."""
        return bool(self._unread) and not self._unread[0].held

    def _write_loop(self):
        while True:
            with self._unread_changed:
                self._unread_changed.wait_for(lambda: self._writer_stopped or self._writable())
                if self._writer_stopped:
                    return
                step = self._unread[0]
            try:
                self._wait_for_device(step)
                with self._writing:
                    with self._unread_changed:
                        if self._writer_stopped:
                            return
                        self._unread.popleft()
                    self._write_step(step)
            except Exception as e:  # noqa: BLE001 - a broken device after a crash: the rest is dropped
                with self._unread_changed:
                    self._writer_failure = e
                    self._writer_stopped = True
                    self._unread.clear()
                    self._unread_changed.notify_all()
                return
            with self._unread_changed:
                self._unread_changed.notify_all()

    def _wait_for_device(self, step):
        for mark in _marks(step):
            if not self._clock.is_done(mark):
                self._clock.wait(mark)
        for loss in step.losses:
            loss.wait()

    def _keep_up(self):
        """The script's thread waits while the host is more than MAX_UNREAD_STEPS written steps ahead
        (steps held for their window's trace do not count: they wait for this thread)."""
        with self._unread_changed:
            self._unread_changed.wait_for(
                lambda: self._writer_stopped or sum(not s.held for s in self._unread) <= MAX_UNREAD_STEPS)

    def _flush(self):
        """Waits until every sealed step is written (the held ones are released first: the run ends)."""
        with self._unread_changed:
            self._release_held()
            self._unread_changed.notify_all()
            self._unread_changed.wait_for(lambda: self._writer_stopped or not self._unread)

    @property
    def writer_failure(self):
        """What stopped the writer thread (steps after it were not written), or None."""
        return self._writer_failure

    def _stop_writer_and_write_done(self):
        """Another thread ends the run (a hung script): the writer thread stops (it may be stuck on
        the device) and the steps the device has done are written here, in order."""
        with self._unread_changed:
            self._writer_stopped = True
            self._release_held()
            self._unread_changed.notify_all()
        with self._writing:  # a step being written now is written first
            while self._unread and self._is_done(self._unread[0]):
                self._write_step(self._unread.popleft())

    def _is_done(self, step):
        return all(self._clock.is_done(m) for m in _marks(step)) and all(r.is_done() for r in step.losses)

    def finish(self, wait_for_device=True, lock_timeout_s=-1):
        """At the end of the run: seals a step whose optimizer step returned and writes what is
        finished (`wait_for_device`: everything; else only what the device has done). Returns the
        number of steps, or None when the lock could not be taken (a hung script holding it)."""
        if not self._lock.acquire(timeout=lock_timeout_s):
            return None
        try:
            self._finished = True
            if self._sampler is not None and not wait_for_device:
                # The watchdog's ending (another thread, a hung script) leaves the profiler alone:
                # the open window's steps are written unsampled.
                self._sampler.abandon()
            if self._open is not None and self._open.end is not None:
                self._seal()
            if self._sampler is not None and wait_for_device:
                self._sampler.finish()
            if wait_for_device:
                self._flush()
            else:
                self._stop_writer_and_write_done()
            return self._sealed
        finally:
            self._lock.release()
