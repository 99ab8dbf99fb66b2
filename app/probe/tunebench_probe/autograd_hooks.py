"""Backward: every torch.autograd.backward call on the script's thread (Tensor.backward() goes
through it) is a `backward` phase on the compute lane, and the tensor it starts from, when it is a
floating-point scalar, is the step's loss (several backward calls in a step: their mean).

The loss is read without stalling the device (device.py). Under a GradScaler the tensor is the
scaled loss, and that is what is recorded. torch.autograd.grad is not a backward phase.
"""
import functools


def install(torch, recorder):
    original = torch.autograd.backward

    @functools.wraps(original)
    def backward(tensors, *args, **kwargs):
        if not recorder.watching():
            return original(tensors, *args, **kwargs)
        interval = recorder.begin("compute", "backward")
        if isinstance(tensors, torch.Tensor) and tensors.numel() == 1 and tensors.is_floating_point():
            recorder.add_loss(tensors)
        try:
            return original(tensors, *args, **kwargs)
        finally:
            recorder.end(interval)

    torch.autograd.backward = backward
