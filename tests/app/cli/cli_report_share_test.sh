#!/usr/bin/env bash
# The shared report: `report --html` and `--format markdown` from the recorded 7B session, and the
# .html imported back into a session gives the same trials (the text report of both is the same).
# Usage: $0 CLI SESSION
set -euo pipefail
cli="$1"
session="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$cli" report "$session" --trials 2,4,5 --html "$tmp/no-p2p.html" 2>"$tmp/err" || fail "report --html: $(cat "$tmp/err")"
grep -q "wrote $tmp/no-p2p.html (3 trials)" "$tmp/err" || fail "no 'wrote' line: $(cat "$tmp/err")"
grep -q '<p class="verdict" id="verdict">' "$tmp/no-p2p.html" || fail "no verdict in the HTML"

"$cli" report "$session" --trials 2,4,5 --format markdown >"$tmp/no-p2p.md"
[ "$(wc -l <"$tmp/no-p2p.md")" -le 60 ] || fail "the Markdown summary has $(wc -l <"$tmp/no-p2p.md") lines"
grep -q '^\*\*Verdict:\*\* ' "$tmp/no-p2p.md" || fail "no verdict in the Markdown"
"$cli" report "$session" --format markdown -o "$tmp/all.md" 2>/dev/null
[ "$(wc -l <"$tmp/all.md")" -le 60 ] || fail "the 15-trial Markdown summary has $(wc -l <"$tmp/all.md") lines"
"$cli" report "$session" --html "$tmp/all.html" 2>/dev/null
[ "$(stat -c %s "$tmp/all.html")" -lt 2000000 ] || fail "the 15-trial report is $(stat -c %s "$tmp/all.html") bytes"

# Text and JSON go to stdout only.
if "$cli" report "$session" --trials 2 -o "$tmp/x.txt" 2>/dev/null; then fail "-o with text was accepted"; fi

# The report carries its trials: import them into a new session, and the report of that session
# is the report of the original trials.
"$cli" import "$tmp/back.tbsession" "$tmp/no-p2p.html" >"$tmp/import.txt" || fail "import of the report failed"
[ "$(grep -c '^imported trial' "$tmp/import.txt")" -eq 3 ] || fail "import: $(cat "$tmp/import.txt")"
grep -q "NCCL_P2P_DISABLE=1" "$tmp/import.txt" || fail "the no-P2P trial did not come back: $(cat "$tmp/import.txt")"
diff <("$cli" report "$session" --trials 2,4,5 --wide) <("$cli" report "$tmp/back.tbsession" --wide) \
  || fail "the restored trials report differently"
# A second import into the same session adds them again; a file that is not a report is refused.
"$cli" import "$tmp/back.tbsession" "$tmp/no-p2p.html" >/dev/null
[ "$("$cli" list "$tmp/back.tbsession" | grep -c 'NCCL_P2P_DISABLE=1')" -eq 2 ] || fail "second import"
echo '<html><body>not a report</body></html>' >"$tmp/page.html"
if "$cli" import "$tmp/back.tbsession" "$tmp/page.html" 2>"$tmp/err"; then fail "a plain page was imported"; fi
echo "ok: report --html $(stat -c %s "$tmp/no-p2p.html") bytes, 15 trials $(stat -c %s "$tmp/all.html") bytes, markdown $(wc -l <"$tmp/no-p2p.md") lines"
