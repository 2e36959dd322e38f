#!/usr/bin/env bash
# Fetches Debian's headless-capable Chromium and the libraries it needs into a folder, without a
# system install (`apt-get download` + `dpkg-deb -x`), for the browser tests (npm run test:browser).
# Prints the executable's path on its last line; CHROMIUM_ROOT (default .cache/chromium) is where
# it goes, and a second run reuses it. Needs readable apt lists (`apt-get update` runs when it
# can: as root); no root is needed to unpack.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=${CHROMIUM_ROOT:-$PWD/.cache/chromium}
BIN=$ROOT/usr/lib/chromium/chromium
# The chromium package, and the libraries a bookworm image without a desktop lacks (ldd lists them).
PACKAGES="chromium chromium-common libasyncns0 libdouble-conversion3 libflac12 libharfbuzz-subset0 libminizip1 libmp3lame0
  libmpg123-0 libogg0 libopenh264-7 libopenjp2-7 libopus0 libpulse0 libsndfile1 libvorbis0a libvorbisenc2 libxnvctrl0"

if [ ! -x "$BIN" ]; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq; fi
  debs=$(mktemp -d)
  trap 'rm -rf "$debs"' EXIT
  (cd "$debs" && apt-get download -qq $PACKAGES)
  mkdir -p "$ROOT"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$ROOT"; done
fi
export LD_LIBRARY_PATH="$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu/pulseaudio${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
missing=$(ldd "$BIN" | awk '/not found/ {print $1}')
if [ -n "$missing" ]; then
  echo "chromium still lacks: $missing" >&2
  exit 1
fi
"$BIN" --version >&2
echo "$BIN"
