#!/usr/bin/env bash
# Packs what bench/device/run.sh needs on a bare x86-64 machine that has neither PostgreSQL nor
# Node (the workplace's 16-core device machine): this machine's PostgreSQL 15 + pgvector (from
# scripts/install-pgvector.sh) with the shared libraries it links, the node binary, and
# bench/retrieve.ts bundled into one file. Writes .devbundle/ (ignored; about 51 MB).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.devbundle
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out" "$stage"/usr/lib/postgresql/15/{bin,lib} "$stage"/usr/share/postgresql "$stage"/opt/dhrlibs "$stage"/opt/zoneinfo
cp /usr/lib/postgresql/15/bin/{postgres,initdb,pg_ctl} "$stage"/usr/lib/postgresql/15/bin/
# Every server module but the JIT (LLVM alone is 100 MB; the bench runs with JIT unused).
find /usr/lib/postgresql/15/lib -maxdepth 1 -name '*.so' ! -name 'llvmjit*' -exec cp {} "$stage"/usr/lib/postgresql/15/lib/ \;
cp -r /usr/share/postgresql/15 "$stage"/usr/share/postgresql/
cp -r /usr/share/zoneinfo/UTC /usr/share/zoneinfo/Etc "$stage"/opt/zoneinfo/
# Libraries the binaries link, except the C runtime (the target's own, newer glibc serves).
for f in "$stage"/usr/lib/postgresql/15/bin/* "$stage"/usr/lib/postgresql/15/lib/*.so; do ldd "$f" | awk '/=>/ {print $3}'; done |
  sort -u | grep -v -E '/(libc|libm|libresolv|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so|ld-linux' |
  xargs -I{} cp -L {} "$stage"/opt/dhrlibs/
tar -C "$stage" -cJf "$out"/pg.tar.xz .
xz -T0 -c "$(readlink -f "$(command -v node)")" > "$out"/node.xz
npx esbuild bench/retrieve.ts --bundle --platform=node --target=node20 --format=cjs --external:pg-native --outfile="$out"/bench.cjs --log-level=warning
cp bench/device/run.sh "$out"/run.sh
du -sh "$out"/*
