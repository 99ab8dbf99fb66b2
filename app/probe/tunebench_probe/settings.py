"""The trial settings the probe reads from Tunebench's TrialConfig JSON (--config).

Read: steps, warmup, step_timeout_s, gpu_sample_hz, kernel_sample_every, kernel_sample_steps, script_knobs and the values of the knobs listed
in script_knobs (knobs.py). Every other key is ignored here; the hello event's config keeps only
what is known (hello.py). Problems are sentences keyed by the JSON key, reported as one `config`
error (exit code 2); nothing is clamped or guessed.
"""
import json
import math
import os
from dataclasses import dataclass, field

from tunebench_probe.knobs import KNOBS, check_knob_value

_MAX_TIMEOUT_S = 7 * 24 * 3600.0  # the worker's limit: longer is a typo, not a wish
_MAX_SAMPLE_HZ = 1000.0


@dataclass(frozen=True)
class TrialSettings:
    given: dict = field(default_factory=dict)  # the config JSON as read
    steps: int = 20            # optimizer steps, warm-up included; then the probe ends the script
    warmup: int = 3            # first steps flagged warmup
    step_timeout_s: float = 300.0
    gpu_sample_hz: float = 10.0
    kernel_sample_every: int = 20  # TrialConfig's kernel sampling (kernel_sampler.py); 0 turns it off
    kernel_sample_steps: int = 2
    knobs: dict = field(default_factory=dict)  # the knobs to apply: key -> value


def _whole_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _real(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def parse_settings(given):
    """Returns (TrialSettings, [(key, message)])."""
    problems = []
    values = {}
    for key, default, low in (("steps", 20, 1), ("warmup", 3, 0), ("kernel_sample_every", 20, 0),
                              ("kernel_sample_steps", 2, 0)):
        value = _whole_number(given.get(key, default))
        if value is None or value < low or value > 2 ** 53:
            problems.append((key, f"must be a whole number >= {low}, got {given.get(key)!r}"))
        else:
            values[key] = value
    every, count = values.get("kernel_sample_every"), values.get("kernel_sample_steps")
    if every is not None and count is not None and every > 0 and count > every:
        problems.append(("kernel_sample_steps", f"kernel-sampled steps must be between 0 and the sampling period "
                                                f"({every}), got {count}"))
    timeout_s = _real(given.get("step_timeout_s", 300.0))
    if timeout_s is None or not 0 < timeout_s <= _MAX_TIMEOUT_S:
        problems.append(("step_timeout_s", f"must be a number of seconds in (0, {_MAX_TIMEOUT_S:g}], "
                                           f"got {given.get('step_timeout_s')!r}"))
    else:
        values["step_timeout_s"] = timeout_s
    sample_hz = _real(given.get("gpu_sample_hz", 10.0))
    if sample_hz is None or not 0 <= sample_hz <= _MAX_SAMPLE_HZ:
        problems.append(("gpu_sample_hz", f"must be a number in [0, {_MAX_SAMPLE_HZ:g}], "
                                          f"got {given.get('gpu_sample_hz')!r}"))
    else:
        values["gpu_sample_hz"] = sample_hz
    asked = given.get("script_knobs", [])
    knobs = {}
    if not isinstance(asked, list) or not all(isinstance(k, str) for k in asked):
        problems.append(("script_knobs", f"must be a list of knob names, got {asked!r}"))
        asked = []
    for key in asked:
        if key not in KNOBS:
            problems.append(("script_knobs", f"'{key}' cannot be applied to a script (the script knobs are "
                                             f"{', '.join(KNOBS)})"))
            continue
        value = given.get(key, KNOBS[key].default)
        message = check_knob_value(key, value)
        if message:
            problems.append((key, message))
        else:
            knobs[key] = KNOBS[key].kind(value)  # 2.0 for num_workers is 2
    return TrialSettings(given=given, knobs=knobs, **values), problems


def load_settings(path):
    """Reads --config; no path gives the defaults. Returns (TrialSettings, [(key, message)])."""
    if not path:
        return TrialSettings(), []
    if not os.path.isfile(path):
        return TrialSettings(), [("", f"--config {path} is not a regular file")]
    try:
        with open(path, encoding="utf-8") as f:
            given = json.load(f)
    except (OSError, ValueError) as e:
        return TrialSettings(), [("", f"--config {path} is not readable JSON: {e}")]
    if not isinstance(given, dict):
        return TrialSettings(), [("", f"--config {path} must hold a JSON object")]
    return parse_settings(given)
