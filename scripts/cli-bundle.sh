#!/usr/bin/env bash
# Packs a built `tunebench-cli` with the shared libraries it needs (SQLite, ...), so it runs on a
# machine without them (the GPU machine has no SQLite dev libs and no apt). glibc/libstdc++ are left
# out: the target's newer ones are used, as ../shared/tools/gui-bundle.sh does for the GUI.
#
#   scripts/cli-bundle.sh build/app/cli/tunebench-cli .gpu/cli.tar.xz
#   # on the GPU machine:
#   tar -xJf .gpu/cli.tar.xz -C /tmp && /tmp/clibundle/run-cli.sh tune s.tbsession --preset 125m-single ...
set -euo pipefail
BIN="${1:?path to the tunebench-cli binary}"; OUTF="${2:?output .tar.xz}"
T="$(mktemp -d)"; B="$T/clibundle"
mkdir -p "$B/bin" "$B/lib"
cp "$BIN" "$B/bin/tunebench-cli"
strip --strip-debug "$B/bin/tunebench-cli" 2>/dev/null || true
ldd "$B/bin/tunebench-cli" | awk '/=>/{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|ld-linux-x86-64)\.so' |
  while read -r so; do cp -L "$so" "$B/lib/"; done
cat > "$B/run-cli.sh" <<'RUN'
#!/bin/bash
B="$(cd "$(dirname "$0")" && pwd)"
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$B/bin/tunebench-cli" "$@"
RUN
chmod +x "$B/run-cli.sh"
tar -cJf "$OUTF" -C "$T" clibundle
rm -rf "$T"
ls -la "$OUTF"
