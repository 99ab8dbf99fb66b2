"""tunebench_probe: runs a user's unmodified PyTorch training script as one rank of a Tunebench trial.

    python -m tunebench_probe [--config FILE.json] [--events SPEC] [--trial ID] [--event-token T] \
        [--] SCRIPT.py [SCRIPT ARGS...]

Hooks installed before the script runs see its optimizer steps, module calls, backward passes,
DataLoader batches and DDP buckets, and write the protocol's events (docs/PROTOCOL.md); the knobs
the trial asks to apply are applied from outside (docs/SCRIPTS.md). The one thing a script may call
is the step marker below, for loops without a torch optimizer.

This package uses only the standard library and torch. It does not start ranks (Tunebench does),
does not profile kernels, and does not change what the script computes beyond the applied knobs.
"""

_recorder = None  # the running probe's StepRecorder; None when the script runs without the probe


def step_done():
    """Marks the end of one training step. A no-op without the probe, so a script may call it freely:

        try:
            from tunebench_probe import step_done
        except ImportError:
            def step_done(): pass

    Once called, the marker alone delimits steps (optimizer steps no longer do)."""
    if _recorder is not None:
        _recorder.marker()
