# The probe's tests (tunebench_probe): a package so that
# `python3 -m unittest discover -s tests/app/probe -t .` can import them from the repository root.
