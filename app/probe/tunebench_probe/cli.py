"""The probe's command line and its environment fallbacks.

    python -m tunebench_probe [--config FILE.json] [--events SPEC] [--trial ID] [--event-token T] \
        [--trace-dir DIR] [--] SCRIPT.py [SCRIPT ARGS...]

Options end at `--` or at the first word that is not an option: that word is the script and every
word after it belongs to the script, as with `python -m cProfile`. Problems are collected, not
raised, so the caller can report them on the event channel (exit code 2). Nothing here opens files.
"""
from dataclasses import dataclass, field

USAGE = """usage: python -m tunebench_probe [--config FILE.json] [--events SPEC] [--trial ID]
                                [--event-token TOKEN] [--trace-dir DIR] [--] SCRIPT.py [SCRIPT ARGS...]

Runs SCRIPT.py (unmodified) as one rank of a Tunebench trial and writes its events.
  --config FILE.json   the trial configuration (TUNEBENCH_PROBE_CONFIG)
  --events SPEC        unix:PATH | file:PATH | tcp://HOST:PORT | stdout | stderr | none
                       (TUNEBENCH_EVENTS; default stderr)
  --trial ID           trial id stamped on every event (TUNEBENCH_TRIAL)
  --event-token TOKEN  token a tcp:// listener demands (TUNEBENCH_EVENT_TOKEN; prefer the variable)
  --trace-dir DIR      where kernel-sampled steps' torch.profiler traces go (TUNEBENCH_PROBE_TRACE_DIR;
                       default: the --config file's folder, else a new folder under the temp folder)
See docs/SCRIPTS.md."""

_VALUE_OPTIONS = {
    "--config": "config_path",
    "--events": "events",
    "--trial": "trial",
    "--event-token": "event_token",
    "--trace-dir": "trace_dir",
}
_ENV_FALLBACKS = {
    "config_path": "TUNEBENCH_PROBE_CONFIG",
    "events": "TUNEBENCH_EVENTS",
    "trial": "TUNEBENCH_TRIAL",
    "event_token": "TUNEBENCH_EVENT_TOKEN",
    "trace_dir": "TUNEBENCH_PROBE_TRACE_DIR",
}


@dataclass
class ProbeArguments:
    config_path: str = ""
    events: str = "stderr"  # not stdout: the script prints there
    trial: str = ""
    event_token: str = ""
    trace_dir: str = ""
    script: str = ""
    script_args: list = field(default_factory=list)
    help_asked: bool = False
    problems: list = field(default_factory=list)  # sentences for a person


def parse_arguments(argv, environ):
    args = ProbeArguments()
    given = set()
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if word in ("-h", "--help"):
            args.help_asked = True
            return args
        if not word.startswith("-") or word == "-":
            break
        name, has_value, value = word.partition("=")
        if name not in _VALUE_OPTIONS:
            args.problems.append(f"unknown option {name} (the script's own options go after SCRIPT.py)")
            i += 1
            continue
        if not has_value:
            if i + 1 >= len(argv):
                args.problems.append(f"{name} needs a value")
                break
            i += 1
            value = argv[i]
        setattr(args, _VALUE_OPTIONS[name], value)
        given.add(_VALUE_OPTIONS[name])
        i += 1
    if i < len(argv):
        args.script = argv[i]
        args.script_args = list(argv[i + 1:])
    elif not args.problems:
        args.problems.append("no script given: python -m tunebench_probe [OPTIONS] SCRIPT.py [ARGS...]")
    for attribute, variable in _ENV_FALLBACKS.items():
        if attribute not in given and environ.get(variable):
            setattr(args, attribute, environ[variable])
    return args
