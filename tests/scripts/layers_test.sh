#!/usr/bin/env bash
# The layers issue 42 separated stay apart (docs/ARCHITECTURE.md, "Layers and what links to what"):
#  - the benchmark does not ask the predictor: core/engine names neither core/predict nor
#    core/analysis (what they share is core/rules);
#  - core/rules asks nobody: it includes core/config and itself only;
#  - the store is below the analysis: core/store includes and links no analysis (export's figures
#    are computed in core/report/export.h).
#   layers_test.sh ROOT
set -uo pipefail
ROOT="$1"
cd "$ROOT" || exit 1
status=0
fail() { echo "FAIL: $1"; shift; printf '  %s\n' "$@"; status=1; }

found=$(grep -rn "core/predict\|core/analysis" core/engine)
[ -z "$found" ] || fail "core/engine names core/predict or core/analysis" "$found"

found=$(grep -rn '#include "core/' core/rules | grep -v '#include "core/\(config\|rules\)/')
[ -z "$found" ] || fail "core/rules includes more than core/config" "$found"
found=$(grep -n "Tunebench::" core/rules/CMakeLists.txt | grep -v "Tunebench::\(config\|warnings\|rules\)")
[ -z "$found" ] || fail "core/rules links more than core/config" "$found"

found=$(grep -rn '#include "core/\(analysis\|predict\|report\|import\|launch\|investigate\|engine\)/' core/store)
[ -z "$found" ] || fail "core/store includes a module above it" "$found"
found=$(grep -n "Tunebench::\(analysis\|predict\|report\)" core/store/CMakeLists.txt)
[ -z "$found" ] || fail "core/store links a module above it" "$found"

[ "$status" -eq 0 ] && echo "ok: engine, rules and store keep to their layers"
exit $status
