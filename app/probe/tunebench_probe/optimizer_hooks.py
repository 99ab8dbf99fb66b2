"""Optimizer steps: every torch.optim.Optimizer subclass's own `step` is wrapped at class level, the
ones torch defines now and, through Optimizer.__init_subclass__, every one defined later (the
script's, a library's). Only the outermost step() call on the script's thread counts: a subclass
calling super().step(), a wrapper stepping an inner optimizer, or LBFGS's closure are inside it.
LR schedulers wrap an instance's bound step and call through it, so they add nothing.

The time inside that call is the `optimizer` phase; its return ends the step (recorder.py has the
rule for several optimizers in one iteration). torch 1.13 has no global optimizer hooks, hence the
wrapping; it is the same on 2.x so both behave alike.
"""
import functools
import inspect


def install(torch, recorder):
    optimizer_base = torch.optim.Optimizer
    in_step = [False]  # an outermost step() is running on the script's thread

    def wrap(cls):
        step = cls.__dict__.get("step")
        if not inspect.isfunction(step) or getattr(step, "_tunebench_step", False):
            return

        @functools.wraps(step)
        def timed_step(self, *args, **kwargs):
            if in_step[0] or not recorder.watching():
                return step(self, *args, **kwargs)
            in_step[0] = True
            try:
                interval = recorder.optimizer_begin()
                try:
                    return step(self, *args, **kwargs)
                finally:
                    recorder.optimizer_end(interval)
            finally:
                in_step[0] = False

        timed_step._tunebench_step = True
        cls.step = timed_step

    pending = [optimizer_base]
    while pending:
        cls = pending.pop()
        wrap(cls)
        pending.extend(cls.__subclasses__())

    inherited = optimizer_base.__dict__.get("__init_subclass__")

    def init_subclass(cls, **kwargs):
        if inherited is not None:
            inherited.__get__(None, cls)(**kwargs)
        else:
            super(optimizer_base, cls).__init_subclass__(**kwargs)
        wrap(cls)

    optimizer_base.__init_subclass__ = classmethod(init_subclass)
