"""Host-to-device copies (CUDA only): Tensor.to and Tensor.cuda of a CPU tensor whose result is on a
CUDA device are `h2d` phases on the host lane, timed with CUDA events on the current stream (so a
non_blocking copy from pinned memory is timed where it runs). A copy is an activity (it may end the
previous step) but never opens the first step: model.to(device) before training is no phase, and
parameters (nn.Parameter) are never counted. A phase nested in a data fetch is not recorded.

Not installed on CPU runs, which have no such copies (tests/app/probe/test_cuda.py covers it on a GPU).
"""
import functools


def _timed(original, torch, recorder, is_compiling):
    @functools.wraps(original)
    def copy(tensor, *args, **kwargs):
        if tensor.is_cuda or isinstance(tensor, torch.nn.Parameter) or is_compiling() or not recorder.watching():
            return original(tensor, *args, **kwargs)
        interval = recorder.begin("host", "h2d", opens_first_step=False)
        result = original(tensor, *args, **kwargs)
        recorder.end(interval, keep=result.is_cuda)  # a CPU dtype cast is no copy to the device
        return result
    return copy


def install(torch, recorder, is_compiling):
    for name in ("to", "cuda"):
        setattr(torch.Tensor, name, _timed(getattr(torch.Tensor, name), torch, recorder, is_compiling))
