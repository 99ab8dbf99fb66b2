"""Kernel-sampled steps (docs/SCRIPTS.md, "Kernel-sampled steps"): torch.profiler around chosen steps.

The schedule is the worker's (TrialConfig::kernel_sampled): the first `kernel_sample_steps` measured
steps of every `kernel_sample_every`; 0 turns it off. Only those steps run under torch.profiler; the
others run with no profiler at all. Each run of consecutive sampled steps (a window) is recorded as
one Chrome trace in the trace folder, every step inside it marked `ProfilerStep#N` with the probe's
own step number, and written when the window's last step ends; the window's `step` events are held
back until then and name it (`kernel_trace`). Tunebench reads the trace with its trace import
(core/import read_torch_trace: StepBuilder and metrics::summarise_gpu_activity, the code imported
traces go through) and replaces those steps' compute lane with the kernels and the classified GPU
idle gaps (core/launch/kernel_traces.h). Nothing here interprets a trace.

The profiler's costs stay out of the steps: it starts before the window's first step starts and
stops (and writes) once the last one is sealed (at the next activity: a second optimizer of the
same iteration still belongs to it); the recorder starts the next step after that. On a
GPU the device is synchronised at each sampled step's boundary, so a trace step holds the kernels
its step launched and no earlier step's (a host running ahead would otherwise put the previous
step's kernels in it): sampled steps show the step's own GPU idle, not the overlap between steps.

A GPU run whose PyTorch has no Kineto records no kernels: a `kernel-sampling` warning says so once
and no step is sampled. A script that starts a profiler of its own (torch.profiler, or
torch.autograd.profiler.profile) turns sampling off for the rest of the run, with a warning: one
profiler at a time is what PyTorch allows, and the script's wins (a window being recorded is
dropped, its steps unsampled). On the CPU the trace holds host ops only; the reading side says GPU busy
is unavailable.
"""
import json
import os
import time


def is_sampled(index, warmup, every, count):
    """TrialConfig::kernel_sampled: measured steps only, the first `count` of every `every`."""
    return every > 0 and count > 0 and index >= warmup and (index - warmup) % every < count


def _teardown_cupti_after_each_window(torch):
    """Kineto detaches CUPTI when a profiler stops only with TEARDOWN_CUPTI=1 (read at each stop);
    left attached, every later kernel launch pays for it: the unsampled steps of a short script ran
    1.5x slower after its first window on an H100. Set unless the script's environment says
    otherwise; not before CUDA 12.6, whose CUPTI crashed re-attaching under CUDA graphs (PyTorch
    turns it off for its own CUDA graphs the same way)."""
    version = tuple(int(part) for part in (torch.version.cuda or "0.0").split(".")[:2] if part.isdigit())
    if version >= (12, 6):
        os.environ.setdefault("TEARDOWN_CUPTI", "1")


class KernelSampler:
    def __init__(self, torch, settings, trace_dir, rank, cuda, writer):
        self._torch = torch
        self._warmup = settings.warmup
        self._every = settings.kernel_sample_every
        self._count = settings.kernel_sample_steps
        self._steps_wanted = settings.steps
        self._trace_dir = trace_dir
        self._rank = rank
        self._cuda = cuda
        self._writer = writer
        self._profile = None
        self._window = []         # step indices of the window being recorded
        self._marker = None       # (index, record_function) of the open ProfilerStep#N
        self._traces = {}         # step index -> the trace file of its window
        self._off = not (self._every > 0 and self._count > 0)  # off: nothing to sample, nothing to say
        self._starting = False    # our own profiler is starting (the start hook lets it through)
        self._install_start_hook()
        if not self._off and cuda and not torch.autograd.kineto_available():
            self._disable("this PyTorch has no Kineto profiler, so no GPU kernels can be recorded: "
                          "no step is kernel-sampled (GPU busy and GPU idle unavailable)")

    def sampled(self, index):
        return (not self._off and index < self._steps_wanted
                and is_sampled(index, self._warmup, self._every, self._count))

    def _disable(self, why):
        self._off = True
        self._writer.warning("kernel-sampling", why)

    def _install_start_hook(self):
        profile = self._torch.autograd.profiler.profile  # torch.profiler.profile starts one of these too
        original = getattr(profile, "_start_trace", None)
        if original is None:
            return
        sampler = self

        def _start_trace(prof, *args, **kwargs):
            if not sampler._starting:
                sampler._script_profiles()
            return original(prof, *args, **kwargs)

        profile._start_trace = _start_trace

    def _script_profiles(self):
        if self._off:
            return
        dropped = ""
        if self._profile is not None:
            if self._marker is not None:
                self._marker[1].__exit__(None, None, None)
                self._marker = None
            try:
                self._profile.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the script's profiler must start whatever ours does
                pass
            self._profile = None
            dropped = f" (steps {self._window[0]}-{self._window[-1]} dropped from the sample)"
            self._window = []
        self._disable("the script starts a torch profiler of its own: kernel sampling is off for the rest of "
                      f"the run{dropped}; import the script's trace for its GPU view (tunebench-cli import)")

    # ---- called by the recorder on the script's thread ----------------------------------------

    def step_opening(self, index):
        """Step `index` is about to start. True when the profiler was started just now: the step
        starts after it, not where the previous one ended."""
        if not self.sampled(index) or self._profile is not None:
            return False
        return self._start()

    def step_opened(self, index):
        """Step `index` has its start: a sampled step's ProfilerStep opens (after the start's mark,
        so the trace step holds no more than the probe's step)."""
        if self.sampled(index) and self._profile is not None:
            self._open_marker(index)

    def step_ended(self, index):
        """Step `index` ended (an optimizer step returned, or the marker): its ProfilerStep closes and,
        inside a window, the next one opens. A second call for the same step (a second optimizer of
        one iteration) does nothing; that optimizer's kernels then fall in the next trace step and
        are clipped away (or after the window's last step, in no step)."""
        if self._marker is None or self._marker[0] != index:
            return
        self._close_marker()
        if self.sampled(index + 1):
            self._open_marker(index + 1)

    def window_ends_after(self, index):
        """Step `index` is sealed (the next activity came, or the run ends). True when it was the
        window's last: the profiler was stopped and the trace written just now, so the next step
        starts after this."""
        if self._profile is None or self.sampled(index + 1):
            return False
        self._close_marker()
        self._stop()
        return True

    def finish(self):
        """The run ends (the script returned, failed or was stopped): a window still open is
        written with the steps it holds."""
        if self._profile is not None:
            self._close_marker()
            self._stop()

    def abandon(self):
        """The run ends on another thread (a hung script): the open window's steps are written
        without a trace; the profiler is left as it is."""
        self._off = True
        self._window = []
        self._profile = None

    def trace_for(self, index):
        """The trace file of step `index`'s window; None for an unsampled step (or a failed write)."""
        return self._traces.get(index)

    def ready(self, index):
        """Whether step `index`'s event can be written: unsampled, or its window's trace is written."""
        return index not in self._window or self._profile is None

    # ---- the profiler ---------------------------------------------------------------------------

    def _start(self):
        torch = self._torch
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self._cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
            _teardown_cupti_after_each_window(torch)
        try:
            profile = torch.profiler.profile(activities=activities)
            self._base_ns = time.time_ns()
            self._starting = True
            profile.__enter__()
        except Exception as e:  # noqa: BLE001 - any failure to profile ends sampling, never the script
            self._disable(f"torch.profiler could not start ({type(e).__name__}: {e}): no step is kernel-sampled")
            return False
        finally:
            self._starting = False
        self._profile = profile
        self._window = []
        if self._cuda:
            # The profiler's first-activity set-up is paid here, outside the step, and the step
            # starts with the device idle.
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
        return True

    def _open_marker(self, index):
        if self._marker is not None:
            return
        marker = self._torch.autograd.profiler.record_function(f"ProfilerStep#{index}")
        marker.__enter__()
        self._marker = (index, marker)
        self._window.append(index)

    def _close_marker(self):
        """Ends the open ProfilerStep; on a GPU once the device has done the step's work, so the
        trace step ends where the probe's step does (its optimizer's end on the device)."""
        if self._marker is None:
            return
        if self._cuda:
            self._torch.cuda.synchronize()
        self._marker[1].__exit__(None, None, None)
        self._marker = None

    def _stop(self):
        profile, window = self._profile, self._window
        self._profile = None
        if not window:
            profile.__exit__(None, None, None)
            return
        path = os.path.join(self._trace_dir, f"rank{self._rank}-steps{window[0]}-{window[-1]}.pt.trace.json")
        try:
            profile.__exit__(None, None, None)
            profile.export_chrome_trace(path)
            self._as_trace_object(path)
        except Exception as e:  # noqa: BLE001 - a failed write leaves these steps unsampled
            self._writer.warning("kernel-sampling", f"the trace of steps {window[0]}-{window[-1]} could not be "
                                                    f"written to {path} ({type(e).__name__}: {e}): they stay unsampled")
            return
        for index in window:
            self._traces[index] = path

    def _as_trace_object(self, path):
        """PyTorch without Kineto (Debian's 1.13 CPU build) writes a bare JSON array of uncategorised
        CPU events whose times are microseconds since the profiler started; torch.profiler traces
        are an object with "traceEvents" whose events say what they are. Rewritten as one (a small
        CPU trace): the start as baseTimeNanoseconds, the step markers as user annotations and the
        rest as CPU ops, as Kineto writes them."""
        with open(path, encoding="utf-8") as f:
            if f.read(1) != "[":
                return
            f.seek(0)
            events = json.load(f)
        for event in events:
            if isinstance(event, dict) and event.get("ph") == "X" and "cat" not in event:
                event["cat"] = "user_annotation" if str(event.get("name", "")).startswith("ProfilerStep#") else "cpu_op"
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"baseTimeNanoseconds": self._base_ns, "traceEvents": events}, f)
