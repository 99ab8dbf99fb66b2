#!/usr/bin/env bash
# Packs a built Tunebench program with the shared libraries it loads, so that it runs on a machine
# that lacks them: the GPU machine has no Qt, no SQLite dev libraries and no apt.
#
#   scripts/bundle.sh cli    build/app/cli/tunebench-cli        .gpu/cli.tar.xz
#   scripts/bundle.sh gui    build/app/gui/tunebench            .gpu/gui.tar.xz
#   scripts/bundle.sh worker build/app/worker/tunebench-worker  /tmp/worker.tar.xz
#
# The archive holds one folder, KINDbundle/, with bin/, lib/ and a launcher run-KIND.sh that puts
# lib/ first on LD_LIBRARY_PATH; the GUI's also holds Qt's offscreen platform plugin and three
# DejaVu fonts, and its launcher selects them (QT_QPA_PLATFORM=offscreen, a private fontconfig):
#
#   tar -xJf .gpu/gui.tar.xz -C /tmp && /tmp/guibundle/run-gui.sh --worker W --preset 7b-ddp --run \
#       --open s.tbsession --size 1600x1000 --screenshot live.png --screenshot-after 20000
#
# Left out, taken from the target: the C runtime (glibc, libm, libdl, libpthread, librt, the loader),
# libstdc++ and libgcc_s (the target's are newer), and the GPU driver (libcuda, libnvidia-*),
# which must match the target's kernel module. BUNDLE_XZ (default -6) sets the compression.
set -euo pipefail
KIND="${1:?kind: cli, gui or worker}"
BIN="${2:?path to the built program}"
OUTF="${3:?output .tar.xz}"
case "$KIND" in
  cli) NAME=tunebench-cli ;;
  gui) NAME=tunebench ;;
  worker) NAME=tunebench-worker ;;
  *) echo "bundle.sh: unknown kind '$KIND' (cli, gui or worker)" >&2; exit 2 ;;
esac
[ -x "$BIN" ] || { echo "bundle.sh: '$BIN' is not an executable; build it first" >&2; exit 2; }

T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
B="$T/${KIND}bundle"
mkdir -p "$B/bin" "$B/lib"
cp "$BIN" "$B/bin/$NAME"
strip --strip-debug "$B/bin/$NAME" 2>/dev/null || true
LOADED=("$B/bin/$NAME")

if [ "$KIND" = gui ]; then
  PLUGIN="$(find /usr/lib -path '*qt6/plugins/platforms/libqoffscreen.so' 2>/dev/null | head -1)"
  [ -n "$PLUGIN" ] || { echo "bundle.sh: Qt 6's offscreen platform plugin (libqoffscreen.so) not found" >&2; exit 2; }
  mkdir -p "$B/plugins/platforms" "$B/fonts"
  cp "$PLUGIN" "$B/plugins/platforms/"
  LOADED+=("$B/plugins/platforms/libqoffscreen.so")
  for f in DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSansMono.ttf; do
    cp "/usr/share/fonts/truetype/dejavu/$f" "$B/fonts/" ||
      { echo "bundle.sh: font $f missing (apt-get install fonts-dejavu-core)" >&2; exit 2; }
  done
fi

# Every library the loader resolves for the program (and the plugin), less those the target provides.
for f in "${LOADED[@]}"; do
  if ldd "$f" | grep -q "not found"; then
    echo "bundle.sh: $f has unresolved libraries here:" >&2; ldd "$f" | grep "not found" >&2; exit 2
  fi
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u |
  grep -v -E '/(libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|ld-linux[-a-z0-9_.]*|libcuda|libnvidia-[a-z0-9_-]+)\.so' |
  while read -r so; do cp -L "$so" "$B/lib/"; done

LAUNCHER="$B/run-$KIND.sh"
{
  echo '#!/bin/bash'
  echo "# Runs $NAME with the libraries of this bundle."
  echo 'B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"'
  echo 'export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"'
  if [ "$KIND" = gui ]; then
    cat <<'GUI'
# Offscreen, with the bundle's plugin and fonts; fontconfig and Qt's runtime folder in /tmp.
mkdir -p /tmp/guibundle-fontcache
cat > "$B/fonts.conf" <<CONF
<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>$B/fonts</dir><cachedir>/tmp/guibundle-fontcache</cachedir></fontconfig>
CONF
export FONTCONFIG_FILE="$B/fonts.conf" QT_PLUGIN_PATH="$B/plugins" QT_QPA_PLATFORM=offscreen
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/guibundle-xdg}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
GUI
  fi
  echo "exec \"\$B/bin/$NAME\" \"\$@\""
} > "$LAUNCHER"
chmod +x "$LAUNCHER"

mkdir -p "$(dirname "$OUTF")"
XZ_OPT="${BUNDLE_XZ:--6}" tar -cJf "$OUTF" -C "$T" "${KIND}bundle"
echo "$OUTF: $(du -h "$OUTF" | cut -f1), $(ls "$B/lib" | wc -l) libraries"
