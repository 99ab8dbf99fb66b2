#!/usr/bin/env bash
# The HTML report in a real browser: Debian's chromium, headless, renders the report of the
# no-P2P comparison in sessions/h200-7b.tbsession offline. The DOM has the verdict, the tables
# and an SVG per plot; the file names no external URL; the console shows no error; screenshots
# come out at desktop and phone width, light and dark. With pandoc, the Markdown summary is
# rendered to HTML (as GitHub would) and checked too.
# Usage: $0 CLI SESSION [SCREENSHOT_DIR]   (exit 77 = skipped: no chromium)
set -euo pipefail
cli="$1"
session="$2"
shots="${3:-}"
fail() { echo "FAIL: $*" >&2; exit 1; }
browser="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$browser" ] || { echo "SKIP: chromium is not installed (apt-get install chromium); the HTML report was not rendered"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$cli" report "$session" --trials 2,4,5 --html "$tmp/report.html" 2>/dev/null
# No external URL anywhere in the file (the data block is base64: no ':' in it).
if grep -qE '(https?|ftp|wss?):|src=|url\(' "$tmp/report.html"; then
  fail "the report names an external resource: $(grep -oE '(https?|ftp|wss?):[^ "]*|src=[^ ]*|url\([^)]*' "$tmp/report.html" | head -3)"
fi

# Every run offline in its own profile; nothing may be resolved or fetched.
run() {
  local profile
  profile="$(mktemp -d -p "$tmp")"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

run --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" 2>"$tmp/console.log" || fail "chromium failed: $(tail -5 "$tmp/console.log")"
grep -q 'id="verdict"' "$tmp/dom.html" || fail "no verdict in the rendered DOM"
grep -q 'delivers the most throughput' "$tmp/dom.html" || fail "the verdict sentence is missing"
tables="$(grep -o '<table' "$tmp/dom.html" | wc -l)"
[ "$tables" -ge 5 ] || fail "$tables tables rendered (configuration, metrics, breakdown, telemetry, environment)"
# One SVG per plot: 3 breakdown bars, the step chart, 3 timelines, 3 telemetry charts.
for plot in 'class="hbar"' 'class="chart"' 'class="lanes"'; do
  grep -q "<svg $plot" "$tmp/dom.html" || fail "no <svg $plot> in the DOM"
done
svgs="$(grep -o '<svg ' "$tmp/dom.html" | wc -l)"
[ "$svgs" -ge 10 ] || fail "only $svgs SVGs rendered"
# Console: no error, no refused load (CSP), no failed request.
if grep -E 'CONSOLE|Refused to|net::ERR|Uncaught' "$tmp/console.log" | grep -vi 'INFO:CONSOLE' | grep -q .; then
  fail "the console reported: $(grep -E 'CONSOLE|Refused to|net::ERR|Uncaught' "$tmp/console.log" | head -5)"
fi

out="${shots:-$tmp}"
mkdir -p "$out"
run --window-size=1280,2400 --hide-scrollbars --screenshot="$out/report-light-desktop.png" "file://$tmp/report.html" \
  >/dev/null 2>&1 || fail "screenshot (desktop) failed"
run --window-size=375,2400 --hide-scrollbars --force-dark-mode --blink-settings=preferredColorScheme=0 \
  --screenshot="$out/report-dark-375.png" "file://$tmp/report.html" >/dev/null 2>&1 || fail "screenshot (375 px, dark) failed"
if [ -n "$shots" ]; then  # the other two for docs/UI.md
  run --window-size=1280,2400 --hide-scrollbars --force-dark-mode --blink-settings=preferredColorScheme=0 \
    --screenshot="$out/report-dark-desktop.png" "file://$tmp/report.html" >/dev/null 2>&1
  run --window-size=375,2400 --hide-scrollbars --screenshot="$out/report-light-375.png" "file://$tmp/report.html" \
    >/dev/null 2>&1
fi
for png in "$out/report-light-desktop.png" "$out/report-dark-375.png"; do
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
done

if command -v pandoc >/dev/null; then
  "$cli" report "$session" --trials 2,4,5 --format markdown >"$tmp/summary.md"
  pandoc -f gfm -t html --standalone --metadata title="Markdown summary" "$tmp/summary.md" -o "$tmp/summary.html"
  run --dump-dom "file://$tmp/summary.html" >"$tmp/summary-dom.html" 2>/dev/null
  grep -q '<table' "$tmp/summary-dom.html" || fail "the Markdown table did not render as a table"
  grep -q '<strong>Verdict:</strong>' "$tmp/summary-dom.html" || fail "the Markdown verdict did not render"
  grep -q '<details>' "$tmp/summary-dom.html" || fail "the command lines are not folded"
  [ -z "$shots" ] || run --window-size=900,1400 --hide-scrollbars --screenshot="$out/report-markdown.png" \
    "file://$tmp/summary.html" >/dev/null 2>&1
  echo "ok: markdown rendered by pandoc"
else
  echo "note: pandoc is not installed; the Markdown summary was not rendered"
fi
echo "ok: $tables tables, $svgs SVGs, no console errors, screenshots in $out"
