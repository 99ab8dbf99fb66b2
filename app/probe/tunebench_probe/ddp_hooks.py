"""DistributedDataParallel: applies the DDP knobs and times every gradient bucket's all-reduce.

* Knobs (bucket_mb -> bucket_cap_mb, gradient_as_bucket_view, static_graph) are passed to every
  DDP the script creates, through DDP.__init__.
* Timing: each DDP gets one communication hook, registered right after its construction: the
  default all-reduce (what DDP does without a hook: the bucket divided by the group's size, then
  all-reduced) written out with its timing in one future callback. Every Python callback on a
  bucket's future is paid on the backward's thread in every bucket, and wrapping PyTorch's Python
  default_hooks.allreduce_hook adds a second (a DDP step ran 1.26x slower under the probe on an H100
  with it). DDP allows one hook per instance, so when the script registers its own
  (register_comm_hook, or a built-in one: ALLREDUCE, FP16_COMPRESS) the wrapper swaps it in and
  times it instead. Each bucket is an `all_reduce` interval on the comm lane from the hook's call to
  its future's completion, labelled "bucket I", with the bucket buffer's bytes. On CUDA both ends
  are events: the start on the stream that made the gradients ready, the end in the future's
  callback, whose current stream follows the collective.
FSDP is not hooked: its all-gathers and reduce-scatters are not seen (docs/SCRIPTS.md).
"""
import functools
import inspect

from tunebench_probe.knobs import DDP_KNOBS

_DDP_ARGUMENT = {"bucket_mb": "bucket_cap_mb", "gradient_as_bucket_view": "gradient_as_bucket_view",
                 "static_graph": "static_graph"}


class _TimedHook:
    """The state DDP hands back to timed_comm_hook: the hook that really communicates (None: the
    default all-reduce), and its state."""

    def __init__(self, recorder, state, hook, distributed):
        self.recorder = recorder
        self.state = state
        self.hook = hook
        self.distributed = distributed


def timed_comm_hook(timed, bucket):
    buffer = bucket.buffer()
    interval = timed.recorder.comm_begin(f"bucket {bucket.index()}", buffer.numel() * buffer.element_size())
    if timed.hook is None:  # DDP's own all-reduce, as default_hooks.allreduce_hook does it
        dist = timed.distributed
        group = timed.state if timed.state is not None else dist.group.WORLD
        buffer.div_(group.size())
        future = dist.all_reduce(buffer, group=group, async_op=True).get_future()

        def averaged(done):
            timed.recorder.comm_end(interval)
            return done.value()[0]

        return future.then(averaged)
    future = timed.hook(timed.state, bucket)
    if interval is None:
        return future

    def reduced(done):
        timed.recorder.comm_end(interval)
        return done.value()

    return future.then(reduced)


class DdpHooks:
    def __init__(self, torch, recorder, facts, knobs, writer):
        # not imported by `import torch`; constructed only where torch.distributed is available (run.py)
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        self._torch = torch
        self._recorder = recorder
        self._facts = facts
        self._knobs = {k: v for k, v in knobs.items() if k in DDP_KNOBS}
        self._writer = writer
        builtin = torch.distributed.BuiltinCommHookType
        self._builtin_hooks = {builtin.ALLREDUCE: None,  # timed_comm_hook's own all-reduce
                               builtin.FP16_COMPRESS: default_hooks.fp16_compress_hook}
        self._original_register = torch.nn.parallel.DistributedDataParallel.register_comm_hook

    def install(self):
        ddp_class = self._torch.nn.parallel.DistributedDataParallel
        ddp_class.__init__ = self._hooked_init(ddp_class.__init__)
        ddp_class.register_comm_hook = self._swapping_register(ddp_class.register_comm_hook)
        if hasattr(ddp_class, "_register_builtin_comm_hook"):  # private: it may go in a later torch
            ddp_class._register_builtin_comm_hook = self._swapping_builtin(ddp_class._register_builtin_comm_hook)

    def _hooked_init(self, original):
        signature = inspect.signature(original)

        @functools.wraps(original)
        def init(ddp, *args, **kwargs):
            bound = signature.bind(ddp, *args, **kwargs)
            for knob, value in self._knobs.items():
                bound.arguments[_DDP_ARGUMENT[knob]] = value
            original(*bound.args, **bound.kwargs)
            self._observe(ddp)
            timed = _TimedHook(self._recorder, ddp.process_group, None, self._torch.distributed)
            try:
                self._original_register(ddp, timed, timed_comm_hook)
            except (RuntimeError, AssertionError, ValueError) as e:
                self._writer.warning_once("probe", f"DDP's buckets are not timed: its communication hook could not "
                                                   f"be set ({e})")
                return
            ddp._tunebench_timed_hook = timed
        return init

    def _swapping_register(self, original):
        @functools.wraps(original)
        def register_comm_hook(ddp, state, hook):
            timed = getattr(ddp, "_tunebench_timed_hook", None)
            if timed is None:
                return original(ddp, state, hook)
            ddp._check_comm_hook(hook)  # DDP's own checks of a hook, as when it registers one
            timed.state, timed.hook = state, hook
            return None
        return register_comm_hook

    def _swapping_builtin(self, original):
        @functools.wraps(original)
        def register_builtin(ddp, comm_hook_type):
            timed = getattr(ddp, "_tunebench_timed_hook", None)
            if timed is None or comm_hook_type not in self._builtin_hooks:
                return original(ddp, comm_hook_type)
            timed.state, timed.hook = ddp.process_group, self._builtin_hooks[comm_hook_type]
            return None
        return register_builtin

    def _observe(self, ddp):
        if self._facts.ddp:
            return
        self._facts.ddp = True
        self._facts.backend = str(self._torch.distributed.get_backend(ddp.process_group))
        # What the DDP instance holds, not what the probe passed it: a knob that did not reach DDP shows.
        self._facts.observed.update({
            "bucket_mb": _bucket_mb(ddp.bucket_bytes_cap, self._knobs.get("bucket_mb")),
            "gradient_as_bucket_view": bool(ddp.gradient_as_bucket_view),
            "static_graph": bool(ddp.static_graph),
        })


def _bucket_mb(bucket_bytes_cap, applied):
    """DDP's bucket cap in MiB. DDP keeps int(bucket_cap_mb * 2**20) bytes: when that is the applied
    knob's, the knob as given (0.1, not 0.09999942...), else the cap DDP holds."""
    if applied is not None and int(applied * 1024 * 1024) == bucket_bytes_cap:
        return applied
    return bucket_bytes_cap / (1024.0 * 1024.0)
