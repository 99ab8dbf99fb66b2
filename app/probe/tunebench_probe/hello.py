"""The `hello` and `model` events: what the rank is and what the probe knows of the trial.

hello.config holds only what is KNOWN (a key absent is "unknown" to Tunebench,
core/config/known_settings.h): the trial's own keys the probe ran with (steps, warmup,
step_timeout_s, gpu_sample_hz, kernel_sample_every, kernel_sample_steps); the script keys (script, script_args, python: as the config gave
them, else what ran, the arguments as TrialConfig's template string: shell-quoted, braces
doubled; script_knobs as given); the value of
every applied knob; and what was observed: the first DataLoader iterated (num_workers, pin_memory,
persistent_workers, prefetch_factor, 0 when it loads in the main process), cudnn_benchmark when the
first step is written, the DDP instance (bucket_mb, gradient_as_bucket_view, static_graph),
strategy (ddp, fsdp or single), world_size, and from the first batch script_batch_unit ("tokens":
an integer (B, T) tensor; "samples": the first tensor's first dimension), micro_batch and, for
tokens, seq_len; for samples, samples_per_step (the first step's samples; its steps carry no tokens). An observed value wins over an applied one (PyTorch's rules may have changed it;
a warning said so). model: the parameters of the first outermost module with parameters,
unwrapped (FSDP's flat shards counted at their full size); FLOP fields are left out (unknown).
"""
import os
import shlex
import socket
import sys
import threading

from tunebench_probe.module_hooks import fsdp_class


class RunFacts:
    """What the hooks observed of the script."""

    def __init__(self):
        self.observed = {}   # config keys -> observed value
        self.model = None    # the first outermost module with parameters
        self.ddp = False     # the script created a DistributedDataParallel
        self.backend = ""    # the DDP process group's backend


def _parameter_counts(module):
    parameters = parameter_bytes = 0
    for p in module.parameters():
        unsharded = getattr(p, "_unpadded_unsharded_size", None)  # an FSDP flat parameter
        parameters += unsharded.numel() if unsharded is not None else p.numel()
        local = p.to_local() if hasattr(p, "to_local") else p  # a DTensor's shard
        parameter_bytes += local.numel() * local.element_size()
    return parameters, parameter_bytes


def _strategy(torch, facts):
    fsdp = fsdp_class(torch)
    module = facts.model
    for _ in range(4):  # compile -> DDP/FSDP -> model at most
        if module is None or not isinstance(module, torch.nn.Module):
            break
        # FSDP (FullyShardedDataParallel) or FSDP2 (fully_shard turns the class into an FSDPModule)
        fsdp2 = any(c.__name__ == "FSDPModule" for c in type(module).__mro__)
        if fsdp2 or (fsdp is not None and isinstance(module, fsdp)):
            return "fsdp"
        inner = getattr(module, "_orig_mod", None)  # torch.compile's wrapper; DDP's and FSDP's hold .module
        module = inner if inner is not None else getattr(module, "module", None)
    return "ddp" if facts.ddp else "single"


def _backend(torch, facts):
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return str(dist.get_backend())
    return facts.backend or "none"


class Announcer:
    """Writes hello (and model) once, before the first step event, or at the end of a run without one."""

    def __init__(self, torch, writer, device, rank_env, settings, arguments, facts, driver):
        self._torch = torch
        self._writer = writer
        self._device = device
        self._rank_env = rank_env
        self._settings = settings
        self._arguments = arguments
        self._facts = facts
        self._driver = driver
        self._done = False
        self._announcing = threading.Lock()

    def known_config(self):
        settings, given, facts = self._settings, self._settings.given, self._facts
        ran_args = shlex.join(self._arguments.script_args).replace("{", "{{").replace("}", "}}")
        config = {"steps": settings.steps, "warmup": settings.warmup, "step_timeout_s": settings.step_timeout_s,
                  "gpu_sample_hz": settings.gpu_sample_hz, "kernel_sample_every": settings.kernel_sample_every,
                  "kernel_sample_steps": settings.kernel_sample_steps,
                  "script": given.get("script", self._arguments.script),
                  "script_args": given.get("script_args", ran_args),
                  "python": given.get("python", sys.executable)}
        if "script_knobs" in given:
            config["script_knobs"] = given["script_knobs"]
        config.update(settings.knobs)
        config["cudnn_benchmark"] = bool(self._torch.backends.cudnn.benchmark)
        config.update(facts.observed)
        config["strategy"] = _strategy(self._torch, facts)
        config["world_size"] = self._rank_env.world_size
        return config

    def announce(self):
        with self._announcing:  # the step writer's thread, or the ending's: hello is written once, first
            self._announce()

    def _announce(self):
        if self._done:
            return
        self._done = True
        self._writer.write(
            "hello", host=socket.gethostname(), pid=os.getpid(), world_size=self._rank_env.world_size,
            local_rank=self._rank_env.local_rank, driver=self._driver, torch=str(self._torch.__version__),
            backend=_backend(self._torch, self._facts), clock_offset_us=0,
            env={k: v for k, v in sorted(os.environ.items()) if k.startswith(("NCCL_", "TORCH_NCCL_"))},
            config=self.known_config(), **self._device.facts())
        if self._facts.model is not None:
            parameters, parameter_bytes = _parameter_counts(self._facts.model)
            self._writer.write("model", parameters=parameters, parameter_bytes=parameter_bytes)
