#!/usr/bin/env bash
# Installs the build into a fresh prefix and runs the installed programs together: the worker
# trains two steps, the CLI imports its log, and the installed GUI runs a trial with the worker it
# finds next to itself (no TUNEBENCH_WORKER), writing it into a session the CLI then lists.
#   install_test.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
PREFIX="$(mktemp -d)"
trap 'rm -rf "$PREFIX"' EXIT
unset TUNEBENCH_WORKER
cmake --install "$BUILD" --prefix "$PREFIX" > "$PREFIX/install.log"
BIN="$PREFIX/bin"
for p in tunebench tunebench-worker tunebench-cli; do
  [ -x "$BIN/$p" ] || { echo "not installed: bin/$p"; exit 1; }
done
[ -f "$PREFIX/share/tunebench/sessions/h200-7b.tbsession" ] || { echo "example sessions not installed"; exit 1; }
[ -f "$PREFIX/share/applications/tunebench.desktop" ] || { echo "desktop file not installed"; exit 1; }

"$BIN/tunebench-worker" --help | grep -q "no torch.compile"
"$BIN/tunebench-cli" --help > /dev/null
"$BIN/tunebench-worker" --model tiny --device cpu --steps 2 --warmup 1 --micro-batch 2 --seq-len 16 \
  --events "file:$PREFIX/run.jsonl" --trial installed > "$PREFIX/worker.log" 2>&1
"$BIN/tunebench-cli" import "$PREFIX/s.tbsession" "$PREFIX/run.jsonl" --name installed-worker | grep -q "imported trial 1"

# The installed GUI, offscreen: runs a three-step CPU trial and quits after a screenshot once the
# trial has ended (not after a fixed time: on a loaded machine a step took 2.4 s). The guard only
# catches a window that never quits.
echo '{"model": "tiny", "device": "cpu", "steps": 3, "warmup": 1, "micro_batch": 2, "seq_len": 16}' > "$PREFIX/trial.json"
QT_QPA_PLATFORM=offscreen timeout 240 "$BIN/tunebench" --no-restore --open "$PREFIX/gui.tbsession" --config "$PREFIX/trial.json" \
  --run --screenshot "$PREFIX/gui.png" --screenshot-after finished > "$PREFIX/gui.log" 2>&1 || { cat "$PREFIX/gui.log"; exit 1; }
[ -s "$PREFIX/gui.png" ] || { echo "the installed GUI wrote no screenshot"; exit 1; }
"$BIN/tunebench-cli" list "$PREFIX/gui.tbsession" > "$PREFIX/list.txt"
grep -Eq "^ +1 +done" "$PREFIX/list.txt" || { echo "the installed GUI did not run a trial with the installed worker:"; cat "$PREFIX/list.txt" "$PREFIX/gui.log"; exit 1; }
# Your own script through the installed CLI: tunebench_probe is found beside the programs
# (PREFIX/share/tunebench/python), with no path set; skipped where no Python has torch.
unset TUNEBENCH_PROBE_PATH
[ -f "$PREFIX/share/tunebench/python/tunebench_probe/__main__.py" ] || { echo "tunebench_probe not installed"; exit 1; }
[ -z "$(find "$PREFIX/share/tunebench/python" -name '__pycache__')" ] || { echo "bytecode installed"; exit 1; }
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  scripts="$(cd "$(dirname "$0")/../probe/scripts" && pwd)"
  "$BIN/tunebench-cli" run "$PREFIX/script.tbsession" --script "$scripts/train_mlp.py" --python /usr/bin/python3 \
    --set steps=3 --set warmup=1 > "$PREFIX/script.log" 2>&1 || { cat "$PREFIX/script.log"; exit 1; }
  "$BIN/tunebench-cli" list "$PREFIX/script.tbsession" | grep -Eq "^ +1 +done +3 " ||
    { echo "the installed CLI did not run a script:"; cat "$PREFIX/script.log"; exit 1; }
  # Only the installed copy: without it the installed CLI says where it looked, and does not take
  # the source tree's package this build was made from.
  mv "$PREFIX/share/tunebench/python" "$PREFIX/share/tunebench/python.away"
  rc=0; "$BIN/tunebench-cli" run "$PREFIX/script.tbsession" --script "$scripts/train_mlp.py" --python /usr/bin/python3 \
    --set steps=3 --set warmup=1 > "$PREFIX/script2.log" 2>&1 || rc=$?
  mv "$PREFIX/share/tunebench/python.away" "$PREFIX/share/tunebench/python"
  [ $rc != 0 ] && grep -q "tunebench_probe (which runs your script as a trial) is not in $PREFIX/share/tunebench/python" "$PREFIX/script2.log" ||
    { echo "an install without its tunebench_probe (exit $rc):"; cat "$PREFIX/script2.log"; exit 1; }
fi
echo "installed programs ok"
