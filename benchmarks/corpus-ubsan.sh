#!/usr/bin/env bash
# Labels change nothing a build or a run of the real-world corpus sees. Every file is annotated
# with every criterion at once, and built with the recording runtime `covprune measure` builds
# with (`covprune runtime`: its labels evaluate and record their conditions):
#  1. warnings: each annotated file, built with -Wall -Wextra, gets no warning the original
#     does not get (a warning being its message without its place);
#  2. UBSan: the originals and the annotated files, built with -fsanitize=undefined
#     -fno-sanitize-recover=all, run the same drivers: the same output, and no UBSan report
#     the originals do not give.
# Drivers: zlib's test/example.c and test/minigzip.c (levels 1, 6, 9, filtered, Huffman-only,
# RLE over 2 MB); gzip's own `make check`, in a scratch copy of its built tree; SQLite through
# benchmarks/drivers/sqlite (its SQL scripts over an in-memory and a file database, rollback
# journal and WAL); OpenSSL's four files in libcrypto 1.1.1w (built from crates.io's
# openssl-src with UBSan; the annotated objects replace the originals in a copy of
# libcrypto.a), through benchmarks/drivers/aes.c (FIPS-197's vectors, then 4,000 chained
# rounds) and benchmarks/drivers/libcrypto.c (bn_exp.c, err.c and pem_lib.c by their API).
# Writes OUT (markdown) and prints it.
#
# usage: benchmarks/corpus-ubsan.sh CORPUS SUITES OUT [COVPRUNE]
# CORPUS from benchmarks/fetch-corpus.sh, SUITES from benchmarks/fetch-test-suites.sh; needs
# cargo (to fetch openssl-src), perl and make (to build libcrypto).
set -euo pipefail
corpus=$(cd "${1:?usage: corpus-ubsan.sh CORPUS SUITES OUT [COVPRUNE]}" && pwd)
suites=$(cd "${2:?usage: corpus-ubsan.sh CORPUS SUITES OUT [COVPRUNE]}" && pwd)
out=${3:?usage: corpus-ubsan.sh CORPUS SUITES OUT [COVPRUNE]}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$(dirname "${4:-$here/../target/release/covprune}")" && pwd)/$(basename "${4:-covprune}")
work=$(mktemp -d /tmp/covprune-corpus-ubsan.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$bin" runtime -o "$work/rt" > /dev/null
rt_h=$work/rt/covprune_runtime.h rt_c=$work/rt/covprune_runtime.c
criteria=$("$bin" criteria | awk '{print $1}' | paste -sd,)
ubsan=(-w -fsanitize=undefined -fno-sanitize-recover=all)
rows=()

# Warnings and errors of FILE built with FLAGS..., each message without its place, sorted.
warnings() {
  local f=$1; shift
  cc -c -Wall -Wextra "$@" -o /dev/null "$f" 2>&1 | sed -n 's/^[^ ]*: \(warning\|error\): /\1: /p' | sort -u
}
# annotate NAME DIR FILE FLAGS...: annotates FILE (relative to DIR) into $work/NAME/ and adds
# the warnings it gets that the original does not to $new_warnings.
annotate() {
  local name=$1 dir=$2 file=$3; shift 3
  (cd "$dir" && "$bin" annotate "$file" --criteria "$criteria" -o "$work/$name" "$@" > /dev/null)
  local stem; stem=$(basename "$file" .c)
  (cd "$dir" && warnings "$file" "$@") > "$work/own.txt"
  (cd "$dir" && warnings "$work/$name/${stem}_labels.c" -include "$rt_h" -I"$(dirname "$file")" "$@") > "$work/theirs.txt"
  new_warnings=$((new_warnings + $(comm -13 "$work/own.txt" "$work/theirs.txt" | wc -l)))
  comm -13 "$work/own.txt" "$work/theirs.txt" | sed "s|^|$file: |" >> "$work/new-warnings.txt"
  files=$((files + 1))
}
# compare NAME COMMAND: runs COMMAND (with @ for the program) on $work/NAME-orig and
# $work/NAME-ann in fresh directories; counts runs, differing outputs and new UBSan reports.
compare() {
  local o a
  rm -rf "$work/run" && mkdir "$work/run" && cp "$work/data" "$here"/drivers/sqlite/*.sql "$work/run/"
  o=$(cd "$work/run" && sh -c "${2//@/$work/$1-orig}" 2>"$work/orig.err" | md5sum)
  rm -rf "$work/run" && mkdir "$work/run" && cp "$work/data" "$here"/drivers/sqlite/*.sql "$work/run/"
  a=$(cd "$work/run" && sh -c "${2//@/$work/$1-ann}" 2>"$work/ann.err" | md5sum)
  runs=$((runs + 1))
  [ "$o" = "$a" ] || differ=$((differ + 1))
  if grep -q "runtime error" "$work/ann.err" && ! grep -q "runtime error" "$work/orig.err"; then
    reports=$((reports + 1))
  fi
}
row() { # PROGRAM DRIVERS
  rows+=("| $1 | $files | $new_warnings | $2 | $runs | $differ | $reports |")
}
head -c 2000000 "$corpus/sqlite-3.17.0/sqlite3.c" > "$work/data"

echo "zlib" >&2
files=0 new_warnings=0 runs=0 differ=0 reports=0
z=$corpus/zlib-1.3.2
originals=() annotated=()
for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees trees uncompr zutil; do
  annotate zlib "$z" "$f.c" -I.
  originals+=("$z/$f.c"); annotated+=("$work/zlib/${f}_labels.c")
done
for t in example minigzip; do
  cc "${ubsan[@]}" -I"$z" -o "$work/$t-orig" "$suites/zlib/test/$t.c" "${originals[@]}"
  cc "${ubsan[@]}" -I"$z" -include "$rt_h" -o "$work/$t-ann" "$suites/zlib/test/$t.c" "${annotated[@]}" "$rt_c"
done
compare example "@"
for level in 1 6 9; do
  compare minigzip "@ -$level < data"
  compare minigzip "@ -$level < data | @ -d"
done
for mode in f h R; do compare minigzip "@ -$mode < data | @ -d"; done
row zlib "test/example.c, test/minigzip.c"

echo "gzip" >&2
files=0 new_warnings=0 runs=0 differ=0 reports=0
gz_files="bits deflate gzip inflate trees unlzh unlzw unpack unzip util zip"
for f in $gz_files; do
  annotate gzip "$suites/gzip" "$f.c" -DHAVE_CONFIG_H -I. -Ilib
done
for side in orig ann; do
  cp -a "$suites/gzip" "$work/gzip-$side-tree"
  extra="" libs=""
  if [ $side = ann ]; then
    for f in $gz_files; do cp "$work/gzip/${f}_labels.c" "$work/gzip-ann-tree/$f.c"; done
    cc "${ubsan[@]}" -c -o "$work/covprune_runtime.o" "$rt_c"
    extra="-include $rt_h" libs="$work/covprune_runtime.o"
  fi
  # list-big (4 GiB of zeros through `gzip -1`) takes minutes on the original and hours with
  # every criterion's labels at -O0: it is skipped (exit 77) on both sides.
  printf '#!/bin/sh\nexit 77\n' > "$work/gzip-$side-tree/tests/list-big"
  (cd "$work/gzip-$side-tree" && touch ./*.c && make -j2 CFLAGS="${ubsan[*]} $extra" LIBS="$libs" > make.log 2>&1 \
    && make check CFLAGS="${ubsan[*]} $extra" LIBS="$libs" > check.log 2>&1) || true
done
for side in orig ann; do
  grep -E '^# (TOTAL|PASS|FAIL|XFAIL|ERROR|SKIP):' "$work/gzip-$side-tree/check.log" > "$work/gzip-$side.sum" || true
done
runs=$(sed -n 's/^# TOTAL: *//p' "$work/gzip-orig-tree/check.log")
cmp -s "$work/gzip-orig.sum" "$work/gzip-ann.sum" || differ=1
o_r=$(cat "$work"/gzip-orig-tree/tests/*.log 2>/dev/null | grep -c "runtime error" || true)
a_r=$(cat "$work"/gzip-ann-tree/tests/*.log 2>/dev/null | grep -c "runtime error" || true)
reports=$((a_r > o_r ? a_r - o_r : 0))
ann_pass=$(sed -n 's/^# PASS: *//p' "$work/gzip-ann.sum")
orig_pass=$(sed -n 's/^# PASS: *//p' "$work/gzip-orig.sum")
row gzip "\`make check\`, list-big skipped (PASS: original ${orig_pass:-0}, annotated ${ann_pass:-0})"

echo "SQLite" >&2
files=0 new_warnings=0 runs=0 differ=0 reports=0
s=$corpus/sqlite-3.17.0
annotate sqlite "$s" sqlite3.c
cc "${ubsan[@]}" -I"$s" -c -o "$work/sqldriver.o" "$here/drivers/sqlite/sqldriver.c"
cc "${ubsan[@]}" -I"$s" -c -o "$work/sqlite-orig.o" "$s/sqlite3.c"
cc "${ubsan[@]}" -I"$s" -include "$rt_h" -c -o "$work/sqlite-ann.o" "$work/sqlite/sqlite3_labels.c"
cc -fsanitize=undefined -o "$work/sqlite-orig" "$work/sqldriver.o" "$work/sqlite-orig.o" -lm -lpthread -ldl
cc -fsanitize=undefined -o "$work/sqlite-ann" "$work/sqldriver.o" "$work/sqlite-ann.o" "$rt_c" -lm -lpthread -ldl
for script in "$here"/drivers/sqlite/*.sql; do
  compare sqlite "@ $(basename "$script")"
done
compare sqlite "@ $(cd "$here/drivers/sqlite" && ls ./*.sql | paste -sd' ')"
row SQLite "benchmarks/drivers/sqlite ($(ls "$here"/drivers/sqlite/*.sql | wc -l) scripts, then all in one run)"

echo "OpenSSL (libcrypto 1.1.1w from crates.io's openssl-src, built with UBSan)" >&2
files=0 new_warnings=0 runs=0 differ=0 reports=0
o=$corpus/openssl-1.1.1w
ossl_files="crypto/aes/aes_core.c crypto/bn/bn_exp.c crypto/err/err.c crypto/pem/pem_lib.c"
for f in $ossl_files; do
  annotate "openssl/$(dirname "$f")" "$o" "$f" -I. -Iinclude -DL_ENDIAN -DNDEBUG
done
mkdir -p "$work/crates/src"
printf '[package]\nname = "covprune-openssl"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nopenssl-src = "=111.28.2"\n' > "$work/crates/Cargo.toml"
echo 'fn main() {}' > "$work/crates/src/main.rs"
(cd "$work/crates" && cargo vendor --versioned-dirs vendor > /dev/null 2> "$work/vendor.log") || { cat "$work/vendor.log" >&2; exit 1; }
b=$work/openssl-build
cp -r "$work"/crates/vendor/openssl-src-111.28.2*/openssl "$b"
(cd "$b" && ./Configure linux-x86_64 no-asm no-shared no-tests no-comp no-zlib no-zlib-dynamic no-afalgeng no-engine \
  -O1 "${ubsan[@]}" > "$work/openssl-configure.log" 2>&1 && make -j2 build_libs > "$work/openssl-make.log" 2>&1) \
  || { tail -n 20 "$work/openssl-make.log" >&2; exit 1; }
cp "$b/libcrypto.a" "$work/libcrypto-orig.a"
cp "$b/libcrypto.a" "$work/libcrypto-ann.a"
mkdir -p "$work/ossl-objs"
for f in $ossl_files; do
  stem=$(basename "$f" .c)
  (cd "$b" && cc -O1 "${ubsan[@]}" -I. -Icrypto/include -Iinclude -I"$(dirname "$f")" -DL_ENDIAN -DOPENSSL_PIC -DNDEBUG \
    -include "$rt_h" -c -o "$work/ossl-objs/$stem.o" "$work/openssl/$(dirname "$f")/${stem}_labels.c")
  ar r "$work/libcrypto-ann.a" "$work/ossl-objs/$stem.o" 2> /dev/null
  nm "$work/ossl-objs/$stem.o" > "$work/nm.txt"
  grep -q ' U covprune_hit' "$work/nm.txt" || { echo "$stem.o records no label" >&2; exit 1; }
done
# The annotated library holds the annotated objects (ar replaces members by name).
[ "$(ar t "$work/libcrypto-ann.a" | wc -l)" = "$(ar t "$work/libcrypto-orig.a" | wc -l)" ] || { echo "libcrypto-ann.a gained members" >&2; exit 1; }
for d in aes libcrypto; do
  cc "${ubsan[@]}" -I"$b/include" -o "$work/$d-orig" "$here/drivers/$d.c" "$work/libcrypto-orig.a" -lpthread -ldl
  cc "${ubsan[@]}" -I"$b/include" -o "$work/$d-ann" "$here/drivers/$d.c" "$work/libcrypto-ann.a" "$rt_c" -lpthread -ldl
  compare "$d" "@"
done
row OpenSSL "benchmarks/drivers/aes.c, benchmarks/drivers/libcrypto.c (bn_exp.c, err.c, pem_lib.c), linked with libcrypto 1.1.1w"

{
  echo "# The corpus: labels add no warning and no undefined behaviour"
  echo
  echo "\`benchmarks/corpus-ubsan.sh CORPUS SUITES OUT\` ($(date -u +%Y-%m-%d), $("$bin" --version))."
  echo "Every file annotated with all $(echo "$criteria" | tr ',' '\n' | wc -l) criteria at once, built with the recording"
  echo "runtime \`measure\` uses (\`covprune runtime\`). Warnings: each annotated file built with \`-Wall -Wextra\`, its warnings (each its"
  echo "message without its place) beside the original's. UBSan: originals and annotated files built"
  echo "with \`-fsanitize=undefined -fno-sanitize-recover=all\`, the same drivers run on both; a run"
  echo "differs when its output does (gzip: when a test's result does)."
  echo
  echo "| program | files | warnings the originals do not get | drivers | runs | runs whose output differs | runs with a new UBSan report |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  if [ -s "$work/new-warnings.txt" ]; then
    echo
    echo "New warnings:"
    echo
    sed 's/^/    /' "$work/new-warnings.txt"
  fi
} > "$out"
cat "$out"
