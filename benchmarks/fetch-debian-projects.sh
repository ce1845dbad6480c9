#!/usr/bin/env bash
# Gets three real C libraries from Debian's source packages (bookworm), each built the way its
# own build system builds it, with the compilation database a C team would have:
#   OUT/cjson     cJSON (CMake; -Werror is on by default), built in OUT/cjson-build
#   OUT/fribidi   GNU FriBidi (Meson), built in OUT/fribidi-build
#   OUT/libtasn1  GNU Libtasn1 (autotools with gnulib), configured and built in place under bear
# and writes OUT/VERSIONS (the Debian versions fetched).
# then: cargo run --release -p covprune-benchmarks -- debian --projects OUT
#
# usage: benchmarks/fetch-debian-projects.sh OUT
# needs: apt-get (Debian, with the archive keyring), tar, gcc, make, cmake, meson, ninja, bear
# (all installed by .ci/setup); about 2 minutes.
# Leaves the system's apt configuration as it is (a private deb-src list and lists directory).
set -euo pipefail
out=${1:?usage: fetch-debian-projects.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d /tmp/covprune-debian.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
say() { echo "fetch-debian-projects: $*" >&2; }
for tool in apt-get cmake meson ninja bear make cc; do
  command -v "$tool" > /dev/null || { say "needs $tool (bash .ci/setup installs it)"; exit 1; }
done

uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=$(awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$uri" ] || { say "no Debian apt source configured"; exit 1; }
mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/dl"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri bookworm main" > "$scratch/sources.list"
apt=(-o Dir::Etc::SourceList="$scratch/sources.list" -o Dir::Etc::SourceParts=/nonexistent
     -o Dir::State::Lists="$scratch/lists" -o Dir::Cache="$scratch/cache")
say "apt-get update (private deb-src list)"
apt-get "${apt[@]}" update > "$scratch/update.log" 2>&1 || { cat "$scratch/update.log" >&2; exit 1; }
say "apt-get source cjson fribidi libtasn1-6"
(cd "$scratch/dl" && apt-get "${apt[@]}" source --download-only cjson fribidi libtasn1-6 > "$scratch/source.log" 2>&1) \
  || { cat "$scratch/source.log" >&2; exit 1; }
(cd "$scratch/dl" && ls ./*.dsc | sed 's|^\./||; s|\.dsc$||') > "$out/VERSIONS"

# One orig tarball's tree, extracted with its timestamps (autotools must not regenerate).
unpack() { # PATTERN NAME
  rm -rf "${out:?}/$2" "$scratch/x"
  mkdir -p "$scratch/x"
  tar -xf "$(ls "$scratch"/dl/$1)" -C "$scratch/x"
  mv "$scratch/x"/* "$out/$2"
}
unpack 'cjson_*.orig.tar.*' cjson
unpack 'fribidi_*.orig.tar.*' fribidi
unpack 'libtasn1-6_*.orig.tar.gz' libtasn1

say "building cJSON (CMake)"
rm -rf "$out/cjson-build"
(cmake -S "$out/cjson" -B "$out/cjson-build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$scratch/cjson.log" 2>&1 \
  && cmake --build "$out/cjson-build" -j"$(nproc)" >> "$scratch/cjson.log" 2>&1) \
  || { tail -20 "$scratch/cjson.log" >&2; exit 1; }
say "building FriBidi (Meson)"
rm -rf "$out/fribidi-build"
(meson setup "$out/fribidi-build" "$out/fribidi" > "$scratch/fribidi.log" 2>&1 \
  && ninja -C "$out/fribidi-build" >> "$scratch/fribidi.log" 2>&1) \
  || { tail -20 "$scratch/fribidi.log" >&2; exit 1; }
say "configuring and building Libtasn1 (autotools, under bear)"
(cd "$out/libtasn1" && ./configure --quiet > "$scratch/tasn1.log" 2>&1 \
  && bear -- make -j"$(nproc)" >> "$scratch/tasn1.log" 2>&1) \
  || { tail -20 "$scratch/tasn1.log" >&2; exit 1; }
say "done: --projects $out ($(tr '\n' ' ' < "$out/VERSIONS"))"
