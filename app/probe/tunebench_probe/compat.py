"""What differs between the torch versions the probe runs on (Debian's 1.13 and PyTorch 2.x), in one
place, so the hooks read the same on both. torch is passed in; only torch._dynamo is imported, on
2.0 - 2.2, where Dynamo's "am I tracing" check lives. No version numbers are compared: features
are looked up.
"""
import importlib
import inspect


def is_compiling_check(torch):
    """A function telling whether Dynamo is tracing right now (hooks then do nothing, so they never
    enter a compiled graph); always False on a torch without torch.compile."""
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):  # 2.3+
        return compiler.is_compiling
    if hasattr(torch, "compile"):  # 2.0 - 2.2
        dynamo = importlib.import_module("torch._dynamo")
        check = getattr(dynamo, "is_compiling", None)
        return check if check is not None else importlib.import_module("torch._dynamo.external_utils").is_compiling
    return lambda: False


def forward_hook_options(torch):
    """always_call=True where torch has it (2.1+): the post-hook then runs when forward raised too."""
    register = torch.nn.modules.module.register_module_forward_hook
    return {"always_call": True} if "always_call" in inspect.signature(register).parameters else {}


def parameter_default(function, name):
    return inspect.signature(function).parameters[name].default


def cudnn_version_text(torch):
    version = torch.backends.cudnn.version()
    if not version:
        return ""
    # cuDNN 9 encodes major*10000 + minor*100 + patch, cuDNN 8 and older major*1000 + minor*100 + patch.
    major_unit = 10000 if version >= 90000 else 1000
    return f"{version // major_unit}.{version % major_unit // 100}.{version % 100}"


def nccl_version_text(torch):
    if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        return ""
    return ".".join(str(part) for part in torch.cuda.nccl.version()[:3])  # (major, minor, patch[, suffix])
