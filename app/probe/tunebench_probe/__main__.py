"""`python -m tunebench_probe ...`: see tunebench_probe/run.py."""
import sys

from tunebench_probe.run import main

sys.exit(main(sys.argv[1:]))
