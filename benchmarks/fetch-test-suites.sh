#!/usr/bin/env bash
# Gets the test suites of the project benchmark from Debian's source packages (bookworm):
#   OUT/zlib   zlib 1.2.13's source tree (its test/example.c and test/minigzip.c are built
#              against the corpus's zlib 1.3.2; the API they use is the same)
#   OUT/gzip   gzip 1.12's source tree, configured and built (`make check` needs the tree)
# then: cargo run --release -p covprune-benchmarks -- project --zlib-tests OUT/zlib --gzip-tree OUT/gzip
#
# usage: benchmarks/fetch-test-suites.sh OUT
# needs: apt-get (Debian, with the archive keyring), tar, xz, bzip2, gcc, make; about 3 minutes.
# Leaves the system's apt configuration as it is (a private deb-src list and lists directory).
set -euo pipefail
out=${1:?usage: fetch-test-suites.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d /tmp/covprune-suites.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
say() { echo "fetch-test-suites: $*" >&2; }

# The Debian mirror this machine's apt already uses.
uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=$(awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$uri" ] || { echo "fetch-test-suites: no Debian apt source configured" >&2; exit 1; }
mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/dl"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm main" > "$scratch/sources.list"
apt=(-o Dir::Etc::SourceList="$scratch/sources.list" -o Dir::Etc::SourceParts=/nonexistent
     -o Dir::State::Lists="$scratch/lists" -o Dir::Cache="$scratch/cache")
say "apt-get update (private deb-src list)"
apt-get "${apt[@]}" update > "$scratch/update.log" 2>&1 || { cat "$scratch/update.log" >&2; exit 1; }
say "apt-get source zlib gzip"
(cd "$scratch/dl" && apt-get "${apt[@]}" source --download-only zlib=1:1.2.13.dfsg-1 gzip=1.12-1 > "$scratch/source.log" 2>&1) \
  || { cat "$scratch/source.log" >&2; exit 1; }

rm -rf "$out/zlib" "$out/gzip"
tar -xjf "$scratch/dl/zlib_1.2.13.dfsg.orig.tar.bz2" -C "$scratch"
mv "$scratch/zlib-1.2.13.dfsg" "$out/zlib"
tar -xJf "$scratch/dl/gzip_1.12.orig.tar.xz" -C "$scratch"
mv "$scratch/gzip-1.12" "$out/gzip"
say "configuring and building gzip"
(cd "$out/gzip" && ./configure --quiet > configure.log 2>&1 && make -j"$(nproc)" > make.log 2>&1) \
  || { tail -20 "$out/gzip/configure.log" "$out/gzip/make.log" >&2; exit 1; }
say "done: --zlib-tests $out/zlib --gzip-tree $out/gzip"
