"""The knobs a trial can apply to a user's script (TrialConfig keys listed in `script_knobs`).

Only the knobs listed are enforced; the others stay as the script has them and are only observed
where visible (hello.py). Applying happens in the hooks: the DataLoader knobs in data_hooks.py, the
DDP knobs in ddp_hooks.py, autocast and compile in module_hooks.py; the process-wide switches
(cudnn.benchmark, TF32) here, once before the script and again whenever the script changed them.

What the installed torch cannot do is refused before the script runs (exit code 5), never
approximated: bf16/fp16 autocast on a device whose autocast lacks that dtype, torch.compile on a
torch without it.
"""
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class Knob:
    kind: type
    default: object
    choices: tuple = ()


KNOBS = {
    "num_workers": Knob(int, 0),
    "pin_memory": Knob(bool, False),
    "persistent_workers": Knob(bool, False),
    "prefetch_factor": Knob(int, 0),  # 0: PyTorch's default
    "cudnn_benchmark": Knob(bool, False),
    "amp": Knob(str, "fp32", ("fp32", "tf32", "bf16", "fp16")),
    "bucket_mb": Knob(float, 25.0),
    "gradient_as_bucket_view": Knob(bool, False),
    "static_graph": Knob(bool, False),
    "compile": Knob(str, "off", ("off", "torch")),
}

DATALOADER_KNOBS = ("num_workers", "pin_memory", "persistent_workers", "prefetch_factor")
DDP_KNOBS = ("bucket_mb", "gradient_as_bucket_view", "static_graph")


def check_knob_value(key, value):
    """A sentence when `value` does not fit knob `key`, else ""."""
    knob = KNOBS[key]
    if knob.kind is bool:
        return "" if isinstance(value, bool) else f"must be true or false, got {value!r}"
    if knob.kind is str:
        if value in knob.choices:
            return ""
        return f"cannot be {value!r} for a script (one of {', '.join(knob.choices)})"
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if knob.kind is int and not (is_number and float(value).is_integer() and 0 <= value <= 2 ** 31):
        return f"must be a whole number >= 0, got {value!r}"
    if knob.kind is float and not (is_number and 0 < value <= 1e6):
        return f"must be a number in (0, 1e6], got {value!r}"
    return ""


def autocast_device_type(torch):
    return "cuda" if torch.cuda.is_available() else "cpu"


def unsupported_reason(torch, knobs):
    """A sentence naming what this torch cannot do of `knobs`, else ""."""
    if knobs.get("compile") == "torch" and not hasattr(torch, "compile"):
        return f"compile torch needs torch.compile (PyTorch 2.0 or later); this torch is {torch.__version__}"
    amp = knobs.get("amp")
    if amp in ("bf16", "fp16"):
        device_type = autocast_device_type(torch)
        dtype = torch.bfloat16 if amp == "bf16" else torch.float16
        if device_type == "cuda" and amp == "bf16" and not torch.cuda.is_bf16_supported():
            return f"amp bf16: {torch.cuda.get_device_name()} does not support bfloat16"
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                context = torch.autocast(device_type, dtype=dtype)
        except (RuntimeError, ValueError) as e:
            return f"amp {amp}: this torch ({torch.__version__}) cannot autocast to {dtype} on {device_type}: {e}"
        if not getattr(context, "_enabled", True) or caught:
            said = "; ".join(str(w.message).replace("\n", " ") for w in caught)
            return f"amp {amp}: this torch ({torch.__version__}) cannot autocast to {dtype} on {device_type}" + (
                f" ({said})" if said else "")
    return ""


def _wanted_switches(torch, knobs):
    """The process-wide switches the applied knobs fix: (name, getter, setter, value)."""
    wanted = []
    if "cudnn_benchmark" in knobs:
        wanted.append(("cudnn.benchmark", lambda: torch.backends.cudnn.benchmark,
                       lambda v: setattr(torch.backends.cudnn, "benchmark", v), knobs["cudnn_benchmark"]))
    amp = knobs.get("amp")
    if amp in ("fp32", "tf32"):
        tf32 = amp == "tf32"
        wanted.append(("cuda.matmul.allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32,
                       lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v), tf32))
        wanted.append(("cudnn.allow_tf32", lambda: torch.backends.cudnn.allow_tf32,
                       lambda v: setattr(torch.backends.cudnn, "allow_tf32", v), tf32))
    return wanted


class GlobalSwitches:
    """cudnn.benchmark and the TF32 switches of the applied knobs, held against the script."""

    def __init__(self, torch, knobs, writer):
        self._wanted = _wanted_switches(torch, knobs)
        self._writer = writer

    def apply(self):
        for _name, _get, set_value, value in self._wanted:
            set_value(value)

    def enforce(self):
        """Called at every outermost module call: puts back what the script changed (and says so once)."""
        for name, get_value, set_value, value in self._wanted:
            if get_value() != value:
                set_value(value)
                self._writer.warning_once("knob", f"the script set torch.backends.{name}; the probe keeps it "
                                                  f"{value} as the trial asks")
