"""Optimizer steps: every torch.optim.Optimizer subclass's own `step` is wrapped at class level, the
ones torch defines now and, through Optimizer.__init_subclass__, every one defined later (the
script's, a library's). Only the outermost step() call on the script's thread counts: a subclass
calling super().step(), a wrapper stepping an inner optimizer, or LBFGS's closure are inside it.
LR schedulers wrap an instance's bound step and call through it, so they add nothing.

The time inside that call is the `optimizer` phase; its return ends the step (recorder.py has the
rule for several optimizers in one iteration). torch 1.13 has no global optimizer hooks, hence the
wrapping; it is the same on 2.x so both behave alike.

The phase is the whole `opt.step()` call as the script makes it. An optimizer's first construction
wraps its class's step once more (torch's profile hook: `record_function("Optimizer.step#...")`,
and on 2.x the global and per-instance step hooks); that wrapper is outside the class's own step,
so after construction the class's step is wrapped again, and the probe's bracket is outermost
(torch's `hooked` flag travels with functools.wraps, so torch does not wrap it a third time).
"""
import functools
import inspect


def install(torch, recorder):
    optimizer_base = torch.optim.Optimizer
    in_step = [False]  # an outermost step() is running on the script's thread
    timed_code = [None]  # timed_step's code: a class's step with it is the probe's wrapper

    def wrap(cls):
        step = cls.__dict__.get("step")
        if not inspect.isfunction(step) or step.__code__ is timed_code[0]:
            return  # not a function of this class, or already the probe's outermost bracket

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

        timed_code[0] = timed_step.__code__  # the same code object for every class's wrapper
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

    constructed = optimizer_base.__init__

    @functools.wraps(constructed)
    def init(self, *args, **kwargs):
        constructed(self, *args, **kwargs)
        wrap(type(self))  # outside whatever torch wrapped the class's step in just now

    optimizer_base.__init__ = init
