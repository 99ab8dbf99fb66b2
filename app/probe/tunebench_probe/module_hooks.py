"""Forward: the outermost module call on the script's thread (the first nn.Module.__call__ entered
with no other module call active) is a `forward` phase on the compute lane, through the global
forward pre/post hooks and a depth counter. Every outermost call counts (the model, then a loss
module such as nn.CrossEntropyLoss): both are forward work.

Around that call the probe also applies what must sit at the model: autocast of the `amp` knob
(bf16/fp16, around every outermost call, so the loss module too, as PyTorch's AMP recipe does),
the process-wide switches held against the script (knobs.GlobalSwitches), and `compile torch`:
torch.compile of the first outermost module that has parameters, unwrapped from DDP/FSDP so the
wrapper stays eager (its first call has already started, so it runs eagerly once).

On torch 1.13 a post-hook does not run when forward raises: when a script catches that exception
and calls the same module again, the re-entry is taken as a new outermost call. Hooks do nothing
while Dynamo traces, so they never enter a compiled graph.
"""
import sys
import threading

from tunebench_probe.compat import forward_hook_options, is_compiling_check
from tunebench_probe.knobs import autocast_device_type


def unwrap(torch, module):
    """The module under torch.compile's OptimizedModule, DDP and FSDP wrappers."""
    wrappers = [torch.nn.parallel.DistributedDataParallel]
    fsdp = fsdp_class(torch)
    if fsdp is not None:
        wrappers.append(fsdp)
    while True:
        if hasattr(module, "_orig_mod"):
            module = module._orig_mod
        elif isinstance(module, tuple(wrappers)):
            module = module.module
        else:
            return module


def fsdp_class(torch):
    """FSDP's class when the script imported it (importing it ourselves would cost seconds)."""
    fsdp = sys.modules.get("torch.distributed.fsdp")
    return getattr(fsdp, "FullyShardedDataParallel", None) if fsdp is not None else None


class ForwardHooks:
    def __init__(self, torch, recorder, facts, knobs, switches, writer):
        self._torch = torch
        self._recorder = recorder
        self._facts = facts
        self._switches = switches
        self._writer = writer
        self._is_compiling = is_compiling_check(torch)
        amp = knobs.get("amp")
        self._autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(amp)
        self._autocast_device = autocast_device_type(torch)
        self._compile = knobs.get("compile") == "torch"
        self._depth = 0
        self._outermost = None
        self._interval = None
        self._autocast = None
        self._script_thread = threading.get_ident()  # the recorder's: hooks are installed before the script runs

    def install(self):
        module_api = self._torch.nn.modules.module
        module_api.register_module_forward_pre_hook(self._before)
        module_api.register_module_forward_hook(self._after, **forward_hook_options(self._torch))
        if self._autocast_dtype is self._torch.float16:
            self._writer.warning("amp", "amp fp16: autocast without loss scaling (the probe adds no GradScaler), "
                                        "so small gradients may underflow to zero")

    def _before(self, module, inputs):
        if self._is_compiling():
            return None
        if self._depth > 0 and module is not self._outermost and threading.get_ident() == self._script_thread:
            self._depth += 1  # an inner call (most calls): counted, nothing else; it runs for every module
            return None
        if not self._recorder.watching():
            return None
        if self._depth > 0:  # the last outermost call raised and the script called again (torch 1.13)
            self._leave()
        self._depth = 1
        self._outermost = module
        if self._facts.model is None and any(True for _ in module.parameters()):
            self._meet_model(module)
        self._switches.enforce()
        self._interval = self._recorder.begin("compute", "forward")
        if self._autocast_dtype is not None:
            self._autocast = self._torch.autocast(self._autocast_device, dtype=self._autocast_dtype)
            self._autocast.__enter__()
        return None

    def _after(self, module, inputs, output):
        if self._is_compiling() or self._depth == 0:
            return None
        if self._depth > 1 and threading.get_ident() == self._script_thread:
            self._depth -= 1  # an inner call returns
            return None
        if not self._recorder.watching():
            return None
        self._depth -= 1
        if self._depth == 0:
            self._leave()
        return None

    def _leave(self):
        if self._autocast is not None:
            self._autocast.__exit__(None, None, None)
            self._autocast = None
        self._recorder.end(self._interval)
        self._interval = None
        self._outermost = None
        self._depth = 0

    def _meet_model(self, module):
        self._facts.model = module
        if hasattr(module, "_orig_mod"):
            self._facts.observed["compile"] = "torch"
            if self._compile:
                self._writer.warning("knob", "compile torch: the script compiles its model itself; left as it is")
            return
        if self._compile:
            target = unwrap(self._torch, module)
            target.forward = self._torch.compile(target.forward)
