#!/usr/bin/env bash
# Gets the benchmark corpus from package registries, for machines without ../shared:
#   SQLite 3.17.0 (amalgamation, crate libsqlite3-sys 0.8.1), zlib 1.3.2 (crate libz-sys
#   1.1.31), OpenSSL 1.1.1w's aes_core.c, pem_lib.c, bn_exp.c, err.c (crate openssl-src
#   111.28.2, configured for linux-x86_64), gzip 1.12 (Debian source package gzip 1.12-1).
# Each program gets the layout `cargo run -p covprune-benchmarks -- all` reads: its .c
# files, the headers they include from the build tree (generated ones too), and
# preprocessed/*.i made with the flags its build uses.
#
# usage: benchmarks/fetch-corpus.sh [OUT]     (default: benchmarks/corpus)
# needs: cargo, gcc, make, perl, tar, xz, apt-get (Debian); about 5 minutes on 2 cores.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/corpus}
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d /tmp/covprune-corpus.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
say() { echo "fetch-corpus: $*" >&2; }

# Preprocesses FILE.c (relative to DIR) into OUTDIR/FILE.i with FLAGS.
preprocess() {
  local dir=$1 outdir=$2 flags=$3 file=$4
  mkdir -p "$outdir"
  # shellcheck disable=SC2086
  (cd "$dir" && gcc -E $flags "$file" -o "$outdir/$(basename "${file%.c}").i")
}

# Copies the headers FILE.c includes from inside DIR (gcc -MM with FLAGS) to DST, same paths.
stage_headers() {
  local dir=$1 dst=$2 flags=$3 file=$4 dep
  # shellcheck disable=SC2086
  for dep in $(cd "$dir" && gcc -MM $flags "$file" | sed -e 's/^[^:]*://' -e 's/\\$//'); do
    case $dep in
      /*|"$file") ;;
      *) mkdir -p "$dst/$(dirname "$dep")" && cp "$dir/$dep" "$dst/$dep" ;;
    esac
  done
}

say "downloading crates (cargo vendor)"
mkdir -p "$scratch/crates/src"
cat > "$scratch/crates/Cargo.toml" <<'TOML'
[package]
name = "covprune-corpus"
version = "0.0.0"
edition = "2021"

[dependencies]
libsqlite3-sys = { version = "=0.8.1", default-features = false }
libz-sys = { version = "=1.1.31", default-features = false }
openssl-src = "=111.28.2"
TOML
echo 'fn main() {}' > "$scratch/crates/src/main.rs"
(cd "$scratch/crates" && cargo vendor --versioned-dirs vendor > /dev/null 2> "$scratch/vendor.log") || { cat "$scratch/vendor.log" >&2; exit 1; }
crate_dir() { ls -d "$scratch/crates/vendor/$1-$2"* | head -1; }

say "SQLite 3.17.0"
src=$(crate_dir libsqlite3-sys 0.8.1)/sqlite3
dst=$out/sqlite-3.17.0
rm -rf "$dst" && mkdir -p "$dst"
cp "$src/sqlite3.c" "$src/sqlite3.h" "$src/sqlite3ext.h" "$dst/"
grep -q 'define SQLITE_VERSION *"3.17.0"' "$dst/sqlite3.h"

say "zlib 1.3.2"
src=$(crate_dir libz-sys 1.1.31)/src/zlib
dst=$out/zlib-1.3.2
rm -rf "$dst" && mkdir -p "$dst"
cp "$src"/*.c "$src"/*.h "$dst/"
[ -f "$src/LICENSE" ] && cp "$src/LICENSE" "$dst/"
for f in "$dst"/*.c; do
  preprocess "$dst" "$dst/preprocessed" "-I." "$(basename "$f")"
done

say "OpenSSL 1.1.1w (Configure linux-x86_64, generated headers)"
build=$scratch/openssl
cp -r "$(crate_dir openssl-src 111.28.2)/openssl" "$build"
(cd "$build" && ./Configure linux-x86_64 no-asm no-shared no-tests no-comp no-zlib no-zlib-dynamic > "$scratch/openssl-configure.log" 2>&1 \
  && make build_generated > "$scratch/openssl-make.log" 2>&1)
dst=$out/openssl-1.1.1w
rm -rf "$dst" && mkdir -p "$dst"
flags='-I. -Iinclude -DOPENSSL_USE_NODELETE -DL_ENDIAN -DOPENSSL_PIC -DOPENSSLDIR="/usr/local/ssl" -DENGINESDIR="/usr/local/lib/engines-1.1" -DNDEBUG'
for f in crypto/aes/aes_core.c crypto/pem/pem_lib.c crypto/bn/bn_exp.c crypto/err/err.c; do
  mkdir -p "$dst/$(dirname "$f")"
  cp "$build/$f" "$dst/$f"
  stage_headers "$build" "$dst" "$flags" "$f"
  preprocess "$build" "$dst/preprocessed" "$flags" "$f"
done
cp "$build/LICENSE" "$dst/"

say "gzip 1.12 (Debian source package gzip 1.12-1, configure; make)"
apt_dir=$scratch/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/dl"
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" > "$apt_dir/sources.list"
apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache")
apt-get "${apt_opts[@]}" update > "$scratch/apt-update.log" 2>&1
(cd "$apt_dir/dl" && apt-get "${apt_opts[@]}" source --download-only gzip=1.12-1 > "$scratch/apt-source.log" 2>&1)
tar -C "$scratch" -xf "$apt_dir"/dl/gzip_1.12.orig.tar.xz
build=$scratch/gzip-1.12
(cd "$build" && ./configure --quiet > "$scratch/gzip-configure.log" 2>&1 && make -j2 > "$scratch/gzip-make.log" 2>&1)
dst=$out/gzip-1.12
rm -rf "$dst" && mkdir -p "$dst"
# The program's files for x86-64 (dfltcc.c is for IBM Z only).
for f in bits.c deflate.c gzip.c inflate.c trees.c unlzh.c unlzw.c unpack.c unzip.c util.c zip.c; do
  cp "$build/$f" "$dst/"
  stage_headers "$build" "$dst" "-DHAVE_CONFIG_H -I. -Ilib" "$f"
  preprocess "$build" "$dst/preprocessed" "-DHAVE_CONFIG_H -I. -Ilib" "$f"
done
cp "$build/COPYING" "$dst/"

say "done: $out"
