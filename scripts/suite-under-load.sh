#!/usr/bin/env bash
# Runs the whole ctest suite N times in a row (default 5, two tests per core as `tunebench.sh test`
# runs them) while a CPU hog keeps every core busy,
# the check that no test depends on timing (docs/RELIABILITY.md, "Tests under load"). Stops at the
# first failing round and prints its failures; the hog ends with the script.
#
#   scripts/suite-under-load.sh [ROUNDS] [extra ctest args...]
#
# The hog is `stress --cpu <cores>` when Debian's `stress` is installed, else one `yes > /dev/null`
# per core. The build must be there (scripts/tunebench.sh build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TUNEBENCH_BUILD_DIR:-$ROOT/build}"
rounds="${1:-5}"
shift || true
cores="$(nproc)"
jobs=$((2 * cores))  # as scripts/tunebench.sh test runs the suite
[ -f "$BUILD/CTestTestfile.cmake" ] || { echo "no build in $BUILD: run scripts/tunebench.sh build first" >&2; exit 2; }

hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_hogs EXIT
if command -v stress >/dev/null; then
  stress --cpu "$cores" >/dev/null 2>&1 &
  hogs+=($!)
  hog="stress --cpu $cores"
else
  for _ in $(seq "$cores"); do
    yes >/dev/null &
    hogs+=($!)
  done
  hog="$cores x yes > /dev/null"
fi
echo "[suite-under-load] hog: $hog; $rounds round(s) of ctest -j$jobs" >&2

for round in $(seq "$rounds"); do
  start=$(date +%s)
  log="$BUILD/suite-under-load-$round.log"
  if (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest -j"$jobs" --timeout 900 --output-on-failure "$@" >"$log" 2>&1); then
    echo "[suite-under-load] round $round: $(grep -E 'tests passed' "$log") in $(($(date +%s) - start)) s" >&2
  else
    echo "[suite-under-load] round $round FAILED after $(($(date +%s) - start)) s (log: $log):" >&2
    sed -n '/The following tests FAILED/,$p' "$log" >&2
    exit 1
  fi
done
echo "[suite-under-load] $rounds of $rounds rounds green" >&2
