#!/usr/bin/env bash
# zlib's library files annotated with CC, MCC, GACC and WM, labels evaluating their
# conditions, built with UBSan (-fsanitize=undefined -fno-sanitize-recover=all) beside the
# originals, each linked with zlib's own test programs (test/example.c, test/minigzip.c):
# the same output, and no UBSan report the originals do not give. Also checks that each
# annotated file gets, with -Wall -Wextra, no warning the original does not get.
# Writes OUT (markdown) and prints it.
#
# usage: benchmarks/zlib-ubsan.sh CORPUS SUITES OUT [COVPRUNE]
# CORPUS from benchmarks/fetch-corpus.sh, SUITES from benchmarks/fetch-test-suites.sh.
set -euo pipefail
corpus=${1:?usage: zlib-ubsan.sh CORPUS SUITES OUT [COVPRUNE]}
suites=${2:?usage: zlib-ubsan.sh CORPUS SUITES OUT [COVPRUNE]}
out=${3:?usage: zlib-ubsan.sh CORPUS SUITES OUT [COVPRUNE]}
bin=${4:-$(cd "$(dirname "$0")/.." && pwd)/target/release/covprune}
z=$(cd "$corpus/zlib-1.3.2" && pwd)
tests=$(cd "$suites/zlib/test" && pwd)
work=$(mktemp -d /tmp/covprune-zlib-ubsan.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/evaluating.h" <<'EOF'
#define pc_label(c, ...) do { volatile int cp_v_ = (c); (void)cp_v_; } while (0)
#define pc_label_bindings(c, ...) pc_label(c)
EOF
files="adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees trees uncompr zutil"
originals=(); annotated=(); new_warnings=0
warnings() { cc -c -Wall -Wextra -I"$z" -o /dev/null "$1" 2>&1 | sed -n 's/^[^ ]*: warning: //p' | sort -u; }
for f in $files; do
  "$bin" annotate "$z/$f.c" --criteria CC,MCC,GACC,WM -o "$work/ann" -I"$z" > /dev/null
  originals+=("$z/$f.c"); annotated+=("$work/ann/${f}_labels.c")
  warnings "$z/$f.c" > "$work/own.txt"
  warnings "$work/ann/${f}_labels.c" > "$work/theirs.txt"
  new_warnings=$((new_warnings + $(comm -13 "$work/own.txt" "$work/theirs.txt" | wc -l)))
done
ubsan=(-w -fsanitize=undefined -fno-sanitize-recover=all -I"$z")
for t in example minigzip; do
  cc "${ubsan[@]}" -o "$work/$t-orig" "$tests/$t.c" "${originals[@]}"
  cc "${ubsan[@]}" -include "$work/evaluating.h" -o "$work/$t-ann" "$tests/$t.c" "${annotated[@]}"
done
head -c 2000000 "$corpus/sqlite-3.17.0/sqlite3.c" > "$work/data"
runs=0; differ=0; reports=0
check() { # NAME COMMAND-WITH-@ (@ is the program)
  local o a
  o=$(cd "$work" && sh -c "${2//@/./$1-orig}" 2>&1 | od -An -tx1 | md5sum)
  a=$(cd "$work" && sh -c "${2//@/./$1-ann}" 2>&1 | od -An -tx1 | md5sum)
  runs=$((runs + 1))
  [ "$o" = "$a" ] || differ=$((differ + 1))
  if (cd "$work" && sh -c "${2//@/./$1-ann}" 2>&1 >/dev/null | grep -q "runtime error"); then
    reports=$((reports + 1))
  fi
}
check example "@"
for level in 1 6 9; do
  check minigzip "@ -$level < data"
  check minigzip "@ -$level < data | @ -d"
done
check minigzip "@ -f < data | @ -d"
check minigzip "@ -h < data | @ -d"
check minigzip "@ -R < data | @ -d"
{
  echo "# zlib: labels add no warning and no undefined behaviour"
  echo
  echo "\`benchmarks/zlib-ubsan.sh CORPUS SUITES OUT\` ($(date -u +%Y-%m-%d), $("$bin" --version)): zlib 1.3.2's"
  echo "15 library files annotated with CC, MCC, GACC and WM, labels evaluating their conditions,"
  echo "built with \`-fsanitize=undefined -fno-sanitize-recover=all\` beside the originals and linked"
  echo "with zlib's \`test/example.c\` and \`test/minigzip.c\` (levels 1, 6, 9, filtered, Huffman-only,"
  echo "RLE, each compressing 2 MB and decompressing it again)."
  echo
  echo "| files | warnings the originals do not get | runs | runs whose output differs | runs with a UBSan report |"
  echo "|---|---|---|---|---|"
  echo "| $(echo "$files" | wc -w) | $new_warnings | $runs | $differ | $reports |"
} > "$out"
cat "$out"
