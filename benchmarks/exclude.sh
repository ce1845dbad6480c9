#!/usr/bin/env bash
# `covprune exclude` on a real library with its own tests: zlib 1.3.2 (the corpus's) built
# twice, by gcc --coverage and by clang-19 with source-based coverage and MC/DC, and run on
# zlib's own test programs (test/example.c, and minigzip round trips, from Debian's zlib
# source); every library file annotated for CC and pruned (steps 1-3, --jobs 2), by default
# and with --open-statics (static functions taken as callable from outside: their claims then
# travel too); then the gcovr report, the lcov tracefile and the llvm-cov export written again
# with the proved items excluded. Prints one row per report and view: raw and cleaned
# coverage, items excluded, lines left, alarms (OUT/table.tsv, and OUT/table.md).
#
# usage: benchmarks/exclude.sh OUT [COVPRUNE]
#   OUT: a new directory; COVPRUNE: the binary (default: target/release/covprune).
#   The corpus is $COVPRUNE_CORPUS, else target/tmp/corpus (benchmarks/fetch-corpus.sh); the
#   test programs are in $COVPRUNE_SUITES, else target/tmp/suites
#   (benchmarks/fetch-test-suites.sh); gcovr is $GCOVR, else target/tmp/gcovr-venv/bin/gcovr.
# needs: gcc, clang-19, llvm-19, lcov; about 5 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: exclude.sh OUT [COVPRUNE]}
bin=$(realpath "${2:-$root/target/release/covprune}")
corpus=$(realpath "${COVPRUNE_CORPUS:-$root/target/tmp/corpus}")
suites=$(realpath "${COVPRUNE_SUITES:-$root/target/tmp/suites}")
gcovr=$(realpath "${GCOVR:-$root/target/tmp/gcovr-venv/bin/gcovr}")
[ -d "$corpus/zlib-1.3.2" ] || { echo "exclude.sh: no $corpus/zlib-1.3.2" >&2; exit 2; }
[ -f "$suites/zlib/test/example.c" ] || { echo "exclude.sh: no $suites/zlib/test" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

tests() { # $1: the directory holding example and minigzip
  (cd "$1" && ./example > /dev/null && ./minigzip < zlib.h > zlib.h.gz && ./minigzip -d < zlib.h.gz | cmp - zlib.h \
     && ./minigzip -9 < deflate.c | ./minigzip -d | cmp - deflate.c \
     && ./minigzip -1 < trees.c | ./minigzip -d | cmp - trees.c)
}

# gcc --coverage, in the source directory (the one annotated)
g=$out/src; mkdir -p "$g"
cp "$corpus/zlib-1.3.2/"*.[ch] "$g/"
(cd "$g" && for t in example minigzip; do gcc --coverage -O0 -w -I. -o $t "$suites/zlib/test/$t.c" ./*.c; done)
tests "$g"
(cd "$g" && "$gcovr" --json-pretty -o "$out/cov.json" --root . --exclude 'example\.c|minigzip\.c' > /dev/null)
(cd "$g" && lcov --quiet --capture --directory . --rc lcov_branch_coverage=1 -o "$out/cov.info" > /dev/null 2>&1)

# clang-19, source-based, with MC/DC, of the same sources (the tests' data files copied)
c=$out/clang; mkdir -p "$c"
cp "$g/zlib.h" "$g/deflate.c" "$g/trees.c" "$c/"
files=$(cd "$corpus/zlib-1.3.2" && ls ./*.c | sed 's|^\./||')
(cd "$c" && for t in example minigzip; do
   clang-19 -fprofile-instr-generate -fcoverage-mapping -fcoverage-mcdc -O0 -w -Wno-error=implicit-function-declaration -I"$g" -o $t "$suites/zlib/test/$t.c" \
     $(for f in $files; do echo "$g/$f"; done)
 done)
(export LLVM_PROFILE_FILE="$c/p-%p.profraw" && tests "$c")
llvm-profdata-19 merge -o "$c/all.profdata" "$c"/p-*.profraw
(cd "$c" && llvm-cov-19 export ./example -object ./minigzip -instr-profile=all.profdata \
   $(for f in $files; do echo "$g/$f"; done) > "$out/export.json")

# covprune, per view
printf 'view\treport\traw\tcleaned\texcluded\tleft\talarms\tprune_s\n' > "$out/table.tsv"
for view in default open-statics; do
  a=$out/ann-$view; mkdir -p "$a"
  flag=(); [ "$view" = open-statics ] && flag=(--open-statics)
  start=$(date +%s)
  annotated=()
  for f in $files; do
    stem=$(basename "$f" .c)
    "$bin" annotate --criteria CC -o "$a" "$g/$stem.c" > /dev/null
    "$bin" prune --jobs 2 --no-progress "${flag[@]}" "$a/${stem}_labels.c" > "$a/$stem.prune.txt" 2>&1
    annotated+=("$a/${stem}_labels.c")
  done
  secs=$(( $(date +%s) - start ))
  for r in gcovr:cov.json lcov:cov.info llvm-cov:export.json; do
    fmt=${r%%:*}; rep=${r##*:}
    set +e
    "$bin" exclude "${annotated[@]}" --"$fmt" "$out/$rep" -o "$out/$view.$rep" --json > "$out/$view.$fmt.json"
    code=$?
    set -e
    python3 - "$out/$view.$fmt.json" "$view" "$fmt" "$code" "$secs" >> "$out/table.tsv" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
def ratio(t):
    return f"{t['covered']}/{t['total']} ({100 * t['covered'] / t['total']:.2f}%)" if t and t['total'] else "-"
branches = sum(1 for e in m["excluded"] if e["item"] == "branch")
mcdc = sum(1 for e in m["excluded"] if e["item"] == "mcdc_condition")
raw = ratio(m["raw"]) + ("; MC/DC " + ratio(m.get("mcdc_raw")) if m.get("mcdc_raw") else "")
clean = ratio(m["cleaned"]) + ("; MC/DC " + ratio(m.get("mcdc_cleaned")) if m.get("mcdc_cleaned") else "")
excluded = f"{branches}" + (f" + {mcdc} MC/DC" if m.get("mcdc_raw") else "")
print("\t".join([sys.argv[2], sys.argv[3], raw, clean, excluded, str(len(m["left"])),
                 f"{len(m['alarms'])} (exit {sys.argv[4]})", sys.argv[5]]))
PY
  done
done
column -t -s $'\t' "$out/table.tsv"
{
  echo "| view | report | raw | cleaned | excluded | lines left | alarms | prune (s) |"
  echo "|---|---|---|---|---|---|---|---|"
  tail -n +2 "$out/table.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} > "$out/table.md"
