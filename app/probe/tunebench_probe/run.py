"""The probe's main: reads the command line, opens the event channel, installs the hooks and runs
the script with runpy as `python SCRIPT.py ARGS...` would (sys.argv, the script's folder first on
sys.path, __name__ == "__main__"), then ends the rank with `done`.

Order matters: the channel opens first (nothing can be reported without it: exit 6, stderr only);
then the arguments, the rank environment and the config are checked (exit 2) before torch is
imported (exit 5 when it cannot be, or cannot do an applied knob); the hooks are in place before
the script's first line. Every ending writes `error` (when failed) then `done`, once: the main
thread's ending and the watchdog's (exit 4, os._exit) exclude each other.

A script the probe stopped after its steps (its `finally` blocks have run) leaves through
os._exit once `done` is written and the DataLoader workers are shut down: interpreter shutdown
would race the collective library's threads still releasing Python callbacks (Gloo aborted with
"terminate called without an active exception"), and NCCL can hang there. A script that ended by
itself exits normally, its atexit handlers included.
"""
import os
import platform
import runpy
import sys
import threading

import tunebench_probe
from tunebench_probe import autograd_hooks, copy_hooks, optimizer_hooks
from tunebench_probe.cli import USAGE, parse_arguments
from tunebench_probe.compat import is_compiling_check
from tunebench_probe.data_hooks import DataLoaderHooks
from tunebench_probe.ddp_hooks import DdpHooks
from tunebench_probe.device import CpuDevice, CudaDevice
from tunebench_probe.events import ChannelError, EventWriter, log, open_channel
from tunebench_probe.failures import (EXIT_CHANNEL, EXIT_COMM, EXIT_CONFIG, EXIT_CRASH, EXIT_OK, EXIT_UNSUPPORTED,
                                      describe_exception)
from tunebench_probe.hello import Announcer, RunFacts
from tunebench_probe.kernel_sampler import KernelSampler
from tunebench_probe.knobs import GlobalSwitches, unsupported_reason
from tunebench_probe.module_hooks import ForwardHooks
from tunebench_probe.nvml import Nvml
from tunebench_probe.rank_env import read_rank_env
from tunebench_probe.recorder import StepRecorder, StepsFinished
from tunebench_probe.settings import load_settings
from tunebench_probe.step_events import StepWriter, done_summary
from tunebench_probe.telemetry import TelemetryThread
from tunebench_probe.watchdog import StepWatchdog


def main(argv, environ=os.environ):
    arguments = parse_arguments(argv, environ)
    if arguments.help_asked:
        print(USAGE)
        return EXIT_OK
    rank_env, rank_problem = read_rank_env(environ)
    try:
        sink = open_channel(arguments.events, arguments.event_token)
    except ChannelError as e:
        log(rank_env.rank, str(e))
        return EXIT_CHANNEL
    writer = EventWriter(sink, arguments.trial, rank_env.rank)
    problems = [("", p) for p in arguments.problems] + ([("", rank_problem)] if rank_problem else [])
    settings, setting_problems = load_settings(arguments.config_path)
    problems += setting_problems
    if arguments.script and not os.path.exists(arguments.script):
        problems.append(("", f"the script {arguments.script} does not exist"))
    if problems:
        message = "; ".join(f"{key}: {text}" if key else text for key, text in problems)
        return _end_before_running(writer, "config", EXIT_CONFIG, message,
                                   {"problems": [{"key": key, "message": text} for key, text in problems]})
    writer.log(f"probe started: {arguments.script}")
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any failure to import is the same answer
        return _end_before_running(writer, "unsupported", EXIT_UNSUPPORTED,
                                   f"this Python ({sys.executable}, {platform.python_version()}) cannot import "
                                   f"torch: {e}")
    reason = unsupported_reason(torch, settings.knobs)
    if reason:
        return _end_before_running(writer, "unsupported", EXIT_UNSUPPORTED, reason)
    return ProbeRun(torch, arguments, rank_env, settings, writer).run()


def _end_before_running(writer, kind, code, message, details=None):
    log(writer.rank, message)
    writer.error(kind, message, details)
    writer.write("done", exit_code=code, summary=done_summary([], 0))
    return code


class ProbeRun:
    def __init__(self, torch, arguments, rank_env, settings, writer):
        self._torch = torch
        self._arguments = arguments
        self._rank_env = rank_env
        self._settings = settings
        self._writer = writer
        self._ending = threading.Lock()  # held by whoever writes the last events: main thread or watchdog
        self._facts = RunFacts()
        self._device = self._open_device()
        nvml, nvml_handle, driver = self._open_nvml()
        self._announcer = Announcer(torch, writer, self._device, rank_env, settings, arguments, self._facts, driver)
        self._sampler = KernelSampler(torch, settings, _trace_dir(arguments), rank_env.rank,
                                      self._device.kind == "cuda", writer)
        self._steps = StepWriter(writer, self._device.clock, settings.warmup, rank_env.world_size,
                                 self._announcer.announce, self._sampler.trace_for, self._facts)
        self._watchdog = StepWatchdog(settings.step_timeout_s, self._on_timeout)
        self._recorder = StepRecorder(self._device, settings.steps, self._steps.write, self._watchdog.step_seen,
                                      self._sampler)
        self._telemetry = None
        if settings.gpu_sample_hz > 0:
            self._telemetry = TelemetryThread(writer, settings.gpu_sample_hz, self._device.index, nvml, nvml_handle)

    def _open_device(self):
        torch = self._torch
        if not torch.cuda.is_available():
            return CpuDevice()
        # One GPU per rank, LOCAL_RANK its index (hello's local_rank), as the script's own
        # set_device would choose; a rank that sees fewer GPUs keeps the current one.
        if self._rank_env.local_rank < torch.cuda.device_count():
            torch.cuda.set_device(self._rank_env.local_rank)
        return CudaDevice(torch)

    def _open_nvml(self):
        if self._device.kind != "cuda":
            return None, None, ""
        try:
            nvml = Nvml()
            return nvml, nvml.device_handle(self._torch, self._device.index), nvml.driver_version()
        except (OSError, AttributeError) as e:
            self._writer.log(f"NVML is not available ({e}): telemetry holds the process's CPU and memory only")
            return None, None, ""

    def _install_hooks(self):
        torch, recorder, facts, knobs, writer = (self._torch, self._recorder, self._facts, self._settings.knobs,
                                                 self._writer)
        switches = GlobalSwitches(torch, knobs, writer)
        switches.apply()
        optimizer_hooks.install(torch, recorder)
        autograd_hooks.install(torch, recorder)
        ForwardHooks(torch, recorder, facts, knobs, switches, writer).install()
        data_hooks = DataLoaderHooks(torch, recorder, facts, knobs, writer)
        data_hooks.install()
        if torch.distributed.is_available():
            DdpHooks(torch, recorder, facts, knobs, writer).install()
        if self._device.kind == "cuda":
            copy_hooks.install(torch, recorder, is_compiling_check(torch))
        tunebench_probe._recorder = recorder
        return data_hooks

    def run(self):
        data_hooks = self._install_hooks()
        if self._telemetry is not None:
            self._telemetry.start()
        self._watchdog.start()
        self._writer.log(f"running the script: torch {self._torch.__version__} on {self._device.kind}, "
                         f"step timeout {self._settings.step_timeout_s:g} s")
        code, error, stopped = self._run_script()
        self._watchdog.stop()
        if not self._ending.acquire(blocking=False):
            threading.Event().wait()  # the watchdog is ending the process
        if stopped:
            self._guarded(data_hooks.shutdown_workers)
        self._end(code, error)
        if stopped:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code

    def _run_script(self):
        """(exit code, (kind, message, details) or None, whether the probe stopped the script)."""
        script = self._arguments.script
        sys.argv = [script] + self._arguments.script_args
        sys.path[0] = os.path.dirname(os.path.abspath(script))  # where python SCRIPT.py looks first
        try:
            runpy.run_path(script, run_name="__main__")
        except StepsFinished:
            return EXIT_OK, None, True
        except SystemExit as e:
            code = _exit_status(e.code)
            if code == EXIT_OK:
                return EXIT_OK, None, False
            said = f"with code {e.code}" if isinstance(e.code, int) else f"saying {e.code}"
            return code, ("crash", f"rank {self._rank_env.rank}: the script exited {said}", {}), False
        except BaseException as e:  # noqa: BLE001 - whatever the script raised ends the rank the same way
            kind, code, message, details = describe_exception(self._torch, e, self._rank_env.rank,
                                                              self._facts.backend)
            return code, (kind, message, details), False
        return EXIT_OK, None, False

    def _end(self, code, error):
        steps_done = self._guarded(self._recorder.finish) or 0
        failure = self._recorder.writer_failure
        if failure is not None:
            log(self._rank_env.rank, f"steps after a failed write were not written: {type(failure).__name__}: {failure}")
        self._guarded(self._announcer.announce)  # a run without steps still says what ran
        if code == EXIT_OK and steps_done < self._settings.steps:
            self._writer.warning("steps", f"the script ended after {steps_done} of {self._settings.steps} steps")
        self._write_done(code, error)

    def _on_timeout(self, last_step):
        if not self._ending.acquire(blocking=False):
            return
        waited = f"{self._settings.step_timeout_s:g}"
        if last_step is None:
            message = (f"no training step seen in {waited} s: the script never called an optimizer's step(); "
                       "add the marker (see docs/SCRIPTS.md)")
        else:
            message = (f"no training step seen in {waited} s after step {last_step}: the script hangs or waits "
                       "(for another rank, for I/O, or longer than step_timeout_s between steps)")
            where, in_collective = self._guarded(self._recorder.where) or ("", False)
            if where:
                message += f"; it was {where}"
        self._guarded(lambda: self._recorder.finish(wait_for_device=False, lock_timeout_s=2.0))
        self._guarded(self._announcer.announce)
        details = {"waited_s": self._settings.step_timeout_s}
        if last_step is not None:
            details["in_collective"] = in_collective  # the runner then names the rank it waited for
        self._write_done(EXIT_COMM, ("timeout", message, details))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_COMM)

    def _write_done(self, code, error):
        if self._telemetry is not None:
            self._telemetry.stop()  # `done` is the rank's last event
        if error is not None:
            kind, message, details = error
            log(self._rank_env.rank, message)
            self._writer.error(kind, message, details)
        peak_bytes = self._guarded(lambda: self._device.memory()["peak_bytes"]) or 0
        summary = done_summary(self._steps.measured, peak_bytes)
        self._writer.write("done", exit_code=code, summary=summary)
        log(self._rank_env.rank, f"{summary['measured_steps']} measured steps, median "
                                 f"{summary.get('step_ms_median', 0.0):.1f} ms; exit code {code}")

    def _guarded(self, action):
        """Runs a step of the ending; a failure there (a broken device after a crash) must not stop
        the `done` event."""
        try:
            return action()
        except Exception as e:  # noqa: BLE001
            log(self._rank_env.rank, f"while ending: {type(e).__name__}: {e}")
            return None


def _trace_dir(arguments):
    """Where kernel-sampled steps' traces go: --trace-dir, else beside the trial's config (the
    trial's own folder when Tunebench started the rank), else a new folder under the temp folder."""
    if arguments.trace_dir:
        os.makedirs(arguments.trace_dir, exist_ok=True)
        return os.path.abspath(arguments.trace_dir)
    if arguments.config_path:
        return os.path.dirname(os.path.abspath(arguments.config_path))
    import tempfile
    return tempfile.mkdtemp(prefix="tunebench-probe-")


def _exit_status(code):
    """The process exit status of SystemExit(code), as Python gives it."""
    if code is None:
        return EXIT_OK
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return EXIT_CRASH
