#!/usr/bin/env bash
# The scripts of scripts/ parse, and scripts/bundle.sh packs programs that run from the bundle:
# the CLI (and the GUI when it is built) are packed, unpacked elsewhere and run through their
# launchers, and every library the loader resolves for them, outside the C/C++ runtime left to
# the target, comes from the bundle's lib/.
#   bundle_test.sh SOURCE_DIR TUNEBENCH_CLI [TUNEBENCH_GUI]
set -uo pipefail
SRC="${1:?source dir}"; CLI="${2:?tunebench-cli}"; GUI="${3:-}"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

for s in "$SRC"/scripts/*.sh; do check "bash -n $(basename "$s")" "bash -n '$s'"; done
check "unknown kind refused with a message" \
  "! bash '$SRC/scripts/bundle.sh' nope '$CLI' '$T/x.tar.xz' 2>'$T/err' && grep -q 'unknown kind' '$T/err'"

# Every resolved library of FILE, run with the bundle's lib/ first, is in the bundle or is one the
# bundle leaves to the target.
from_bundle() {
  local dir="$1" file="$2"
  LD_LIBRARY_PATH="$dir/lib" ldd "$file" | awk '/=> \//{print $3}' |
    grep -v -E '/(libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|ld-linux[-a-z0-9_.]*)\.so' |
    grep -v "^$dir/lib/" && return 1
  return 0
}

BUNDLE_XZ=-0 bash "$SRC/scripts/bundle.sh" cli "$CLI" "$T/cli.tar.xz" > "$T/cli.out" 2>&1
check "cli bundle packed" "[ -s '$T/cli.tar.xz' ]"
mkdir -p "$T/cli" && tar -xJf "$T/cli.tar.xz" -C "$T/cli"
check "cli bundle: its libraries come from the bundle" "from_bundle '$T/cli/clibundle' '$T/cli/clibundle/bin/tunebench-cli'"
check "cli bundle runs (LD_LIBRARY_PATH cleared)" \
  "env -u LD_LIBRARY_PATH '$T/cli/clibundle/run-cli.sh' presets --json > '$T/presets.json' &&
   grep -q '\"models\"' '$T/presets.json'"

if [ -n "$GUI" ]; then
  BUNDLE_XZ=-0 bash "$SRC/scripts/bundle.sh" gui "$GUI" "$T/gui.tar.xz" > "$T/gui.out" 2>&1
  check "gui bundle packed" "[ -s '$T/gui.tar.xz' ]"
  mkdir -p "$T/gui" && tar -xJf "$T/gui.tar.xz" -C "$T/gui"
  G="$T/gui/guibundle"
  check "gui bundle holds the offscreen plugin and fonts" \
    "[ -f '$G/plugins/platforms/libqoffscreen.so' ] && [ -f '$G/fonts/DejaVuSans.ttf' ]"
  check "gui bundle: Qt comes from the bundle" "ls '$G/lib' | grep -q '^libQt6Core'"
  check "gui bundle: its libraries come from the bundle" "from_bundle '$G' '$G/bin/tunebench'"
  check "gui bundle: the plugin's libraries come from the bundle" \
    "from_bundle '$G' '$G/plugins/platforms/libqoffscreen.so'"
  # A real start: offscreen, a window drawn and saved as a PNG, from the bundle alone.
  check "gui bundle draws a window offscreen" \
    "env -u LD_LIBRARY_PATH -u QT_QPA_PLATFORM HOME='$T/home' XDG_RUNTIME_DIR='$T/xdg' timeout 120 '$G/run-gui.sh' \
       --no-restore --size 640x400 --screenshot '$T/shot.png' --screenshot-after 300 > '$T/gui.log' 2>&1 &&
     [ -s '$T/shot.png' ]"
  [ -s "$T/shot.png" ] || tail -5 "$T/gui.log"
else
  echo "(the GUI is not built: its bundle is not packed here)"
fi
exit $fail
