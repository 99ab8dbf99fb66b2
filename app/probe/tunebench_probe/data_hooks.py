"""DataLoader: applies the loader knobs, times data waits and counts what each batch holds.

* Knobs (num_workers, pin_memory, persistent_workers, prefetch_factor) are applied to every
  torch.utils.data.DataLoader the script creates, in DataLoader.__init__, within PyTorch's own
  rules: persistent_workers and prefetch_factor only with num_workers > 0 (else not applied, and a
  warning says so), prefetch_factor 0 = PyTorch's default; loading moved into the main process
  (num_workers 0 applied) drops the arguments only worker processes take (timeout,
  multiprocessing_context). An argument the script passed that breaks those rules by itself is
  left to PyTorch to refuse, as without the probe.
* `data_wait` (host lane): the time inside DataLoader.__iter__ (worker start-up at every epoch
  without persistent workers) and inside the iterator's __next__.
* Tokens: the first integer tensor of rank 2 in a batch is (B, T): B*T tokens; without one, the
  first tensor's first dimension counts samples. The unit is fixed by the first batch.
The first DataLoader iterated is the one observed for the hello config.
"""
import functools
import inspect
import weakref

from tunebench_probe.compat import parameter_default
from tunebench_probe.knobs import DATALOADER_KNOBS

_MAX_BATCH_ITEMS = 64  # tensors looked at per batch: a batch is a tensor or a small container


def _tensors(torch, batch, depth=0):
    if isinstance(batch, torch.Tensor):
        yield batch
    elif depth < 4 and isinstance(batch, dict):
        for value in batch.values():
            yield from _tensors(torch, value, depth + 1)
    elif depth < 4 and isinstance(batch, (list, tuple)):
        for value in batch:
            yield from _tensors(torch, value, depth + 1)


def _is_token_tensor(torch, tensor):
    return tensor.dim() == 2 and not tensor.is_floating_point() and not tensor.is_complex() and \
        tensor.dtype != torch.bool


class BatchCounter:
    """Tokens (or samples) of a batch; the first batch fixes the unit and the observed shape."""

    def __init__(self, torch, facts):
        self._torch = torch
        self._facts = facts
        self._unit = ""

    def count(self, batch):
        tensors = []
        for tensor in _tensors(self._torch, batch):
            tensors.append(tensor)
            if len(tensors) >= _MAX_BATCH_ITEMS:
                break
        tokens = next((t for t in tensors if _is_token_tensor(self._torch, t)), None)
        if not self._unit and tensors:
            self._unit = "tokens" if tokens is not None else "samples"
            first = tokens if tokens is not None else tensors[0]
            self._facts.observed["script_batch_unit"] = self._unit
            self._facts.observed["micro_batch"] = int(first.shape[0]) if first.dim() else 1
            if tokens is not None:
                self._facts.observed["seq_len"] = int(tokens.shape[1])
        if self._unit == "tokens":
            return tokens.numel() if tokens is not None else 0
        if self._unit == "samples" and tensors:
            return int(tensors[0].shape[0]) if tensors[0].dim() else 1
        return 0


class DataLoaderHooks:
    def __init__(self, torch, recorder, facts, knobs, writer):
        self._torch = torch
        self._recorder = recorder
        self._facts = facts
        self._knobs = {k: v for k, v in knobs.items() if k in DATALOADER_KNOBS}
        self._writer = writer
        self._counter = BatchCounter(torch, facts)
        self._observed_loader = False
        self._iterators = weakref.WeakSet()  # to shut their worker processes down when the probe stops the script

    def install(self):
        dataloader = self._torch.utils.data.dataloader
        loader_class = dataloader.DataLoader
        if self._knobs:
            loader_class.__init__ = self._applying_init(loader_class.__init__)
        loader_class.__iter__ = self._timed_iter(loader_class.__iter__)
        iterator_class = dataloader._BaseDataLoaderIter
        iterator_class.__next__ = self._timed_next(iterator_class.__next__)

    # ---- knobs ----------------------------------------------------------------------------------

    def _applying_init(self, original):
        signature = inspect.signature(original)
        prefetch_default = parameter_default(original, "prefetch_factor")

        @functools.wraps(original)
        def init(loader, *args, **kwargs):
            bound = signature.bind(loader, *args, **kwargs)
            self._apply(bound.arguments, prefetch_default)
            original(*bound.args, **bound.kwargs)
        return init

    def _apply(self, arguments, prefetch_default):
        knobs = self._knobs
        for key in ("num_workers", "pin_memory"):
            if key in knobs:
                arguments[key] = knobs[key]
        if arguments.get("num_workers", 0) > 0:
            if "persistent_workers" in knobs:
                arguments["persistent_workers"] = knobs["persistent_workers"]
            if "prefetch_factor" in knobs:
                arguments["prefetch_factor"] = knobs["prefetch_factor"] or prefetch_default
            return
        if "num_workers" in knobs:  # loading moves into the main process: worker-only arguments go
            for key in ("prefetch_factor", "persistent_workers", "timeout", "multiprocessing_context"):
                arguments.pop(key, None)
        for key in ("persistent_workers", "prefetch_factor"):
            if knobs.get(key):
                self._writer.warning_once("knob", f"{key} {knobs[key]} needs num_workers > 0: not applied to a "
                                                  "DataLoader that loads in the main process")

    # ---- timing ---------------------------------------------------------------------------------

    def _timed_iter(self, original):
        @functools.wraps(original)
        def timed_iter(loader):
            if not self._recorder.watching():
                return original(loader)
            interval = self._recorder.begin("host", "data_wait")
            try:
                iterator = original(loader)
            finally:
                self._recorder.end(interval)
            if not self._observed_loader:
                self._observed_loader = True
                self._observe(loader)
            self._iterators.add(iterator)
            return iterator
        return timed_iter

    def shutdown_workers(self):
        """Ends the worker processes of the loaders iterated (they would otherwise outlive an os._exit
        by up to the loader's status-check interval, 5 s)."""
        for iterator in list(self._iterators):
            shutdown = getattr(iterator, "_shutdown_workers", None)  # multiprocess iterators only
            if shutdown is not None:
                shutdown()

    def _timed_next(self, original):
        @functools.wraps(original)
        def timed_next(iterator):
            if not self._recorder.watching():
                return original(iterator)
            interval = self._recorder.begin("host", "data_wait")
            try:
                batch = original(iterator)
            finally:
                self._recorder.end(interval)
            self._recorder.add_tokens(self._counter.count(batch))
            return batch
        return timed_next

    def _observe(self, loader):
        workers = loader.num_workers
        self._facts.observed.update({
            "num_workers": workers,
            "pin_memory": bool(loader.pin_memory),
            "persistent_workers": bool(loader.persistent_workers),
            "prefetch_factor": int(loader.prefetch_factor or 0) if workers > 0 else 0,
        })
