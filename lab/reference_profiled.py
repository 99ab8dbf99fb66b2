"""scripts/pytorch_reference.py as a user's script under tunebench_probe (lab/probe_gpu_check.py,
shape `reference`). Arguments are the reference's; `--profile PATH` (taken out before they reach it)
records a torch.profiler trace of three steps whose phases are record_function marks put in from
outside, as lab/probe_phase_check.py reads them: "phase:forward" around the outermost module call,
"phase:backward" around Tensor.backward, "phase:optimizer" around the optimizer's step() as the
script calls it. The reference prints its own step time (RESULT line, step_ms), with or without
the probe.
"""
import os
import runpy
import sys
import types

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "pytorch_reference.py")


def install_marks(torch, path):
    from torch.profiler import ProfilerActivity, profile, schedule
    mark = torch.profiler.record_function
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   schedule=schedule(wait=6, warmup=1, active=3, repeat=1),
                   on_trace_ready=lambda p: p.export_chrome_trace(path))
    depth, forward = [0], []

    def pre(module, inputs):
        depth[0] += 1
        if depth[0] == 1:
            forward.append(mark("phase:forward"))
            forward[-1].__enter__()

    def post(module, inputs, output):
        depth[0] -= 1
        if depth[0] == 0 and forward:
            forward.pop().__exit__(None, None, None)

    torch.nn.modules.module.register_module_forward_pre_hook(pre)
    torch.nn.modules.module.register_module_forward_hook(post)

    tensor_backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        with mark("phase:backward"):
            return tensor_backward(self, *args, **kwargs)

    torch.Tensor.backward = backward

    adamw_init = torch.optim.AdamW.__init__

    def init(self, *args, **kwargs):
        adamw_init(self, *args, **kwargs)
        step = self.step

        def marked_step(optimizer, *a, **k):  # the instance's step: outside every wrapper of the class's
            with mark("phase:optimizer"):
                out = step(*a, **k)
            prof.step()  # ProfilerStep#N is the script's step N (the probe numbers them alike)
            return out

        self.step = types.MethodType(marked_step, self)  # bound, as LR schedulers expect

    torch.optim.AdamW.__init__ = init
    prof.start()


def main():
    args = sys.argv[1:]
    if "--profile" in args:
        i = args.index("--profile")
        path = args[i + 1]
        del args[i:i + 2]
        import torch
        install_marks(torch, path)
    sys.argv = [REFERENCE] + args
    runpy.run_path(REFERENCE, run_name="__main__")


if __name__ == "__main__":
    main()
