#!/usr/bin/env bash
# tunebench-cli report fits 100 columns by default (tables split into column blocks, sentences
# wrapped), keeps every number, and prints the unfitted text with --wide. Usage: $0 CLI SESSION
set -euo pipefail
cli="$1"
session="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
widest() { wc -L; }  # display columns of the longest line (GNU wc; awk may count bytes)

export LC_ALL=C.UTF-8  # characters, not bytes: "–" is one column
fitted="$("$cli" report "$session" --trials 2,4,5)"
wide="$("$cli" report "$session" --trials 2,4,5 --wide)"
[ "$(widest <<<"$fitted")" -le 100 ] || fail "a line is $(widest <<<"$fitted") columns wide"
[ "$(widest <<<"$wide")" -gt 100 ] || fail "--wide did not print the long lines (the test needs them)"
[ "$(widest <<<"$("$cli" report "$session" --trials 2,4,5 --width 72)")" -le 72 ] || fail "--width 72"
# Nothing is lost: the fitted report holds every number of the wide one (tables split into
# column blocks reorder them, so they are compared sorted).
diff <(grep -oE '[0-9][0-9.,]*' <<<"$wide" | sort) <(grep -oE '[0-9][0-9.,]*' <<<"$fitted" | sort) >/dev/null \
  || fail "numbers differ between the fitted and the wide report"
echo "ok: widest fitted line $(widest <<<"$fitted") columns"
