#!/usr/bin/env bash
# Writes what one covprune binary produces on fixed inputs, to compare two versions byte for
# byte (`diff -r OUT1 OUT2`): every corpus file annotated for every criterion (SQLite for CC,
# MCC, GACC and WM), and the ledgers, labels files and annotated files of the Siemens programs
# (CC, MCC, GACC, WM) and of zlib (CC), pruned with steps 1-3 at --jobs 2.
#
# usage: benchmarks/outputs.sh BIN OUT SIEMENS_DIR
#   BIN: a covprune binary; OUT: a new directory; SIEMENS_DIR: a checkout of
#   houzss/Software-Fault-Location-By-SiemensSuite (fetched, never committed).
#   The corpus is $COVPRUNE_CORPUS, else benchmarks/corpus (benchmarks/fetch-corpus.sh).
# Journals, build records and prune's text hold paths and times: compare `*.covprune.json`,
# `*.labels` and `*_labels.c`. A label left unknown by the wall-clock backstop of a loaded
# machine can differ in its reason; prune that file again on a quiet one.
set -euo pipefail
bin=$(realpath "${1:?usage: outputs.sh BIN OUT SIEMENS_DIR}")
out=${2:?usage: outputs.sh BIN OUT SIEMENS_DIR}
siemens=$(realpath "${3:?usage: outputs.sh BIN OUT SIEMENS_DIR}")
corpus=$(realpath "${COVPRUNE_CORPUS:-$(dirname "$0")/corpus}")
mkdir -p "$out"/annot "$out"/siemens "$out"/zlib "$out"/src
criteria="FC STMT DC CC DCC MCC NCC GACC GICC CACC RACC LIMIT WM WM-S PCT FCC"
for f in "$corpus"/*/preprocessed/*.i "$(dirname "$0")/programs/tritype.c"; do
  p=$(basename "$(dirname "$(dirname "$f")")")
  for k in $criteria; do
    "$bin" annotate --criteria "$k" -o "$out/annot/$p/$k" "$f" > /dev/null
  done
done
for k in CC MCC GACC WM; do
  "$bin" annotate --criteria "$k" -o "$out/annot/sqlite/$k" "$corpus/sqlite-3.17.0/sqlite3.c" > /dev/null
done
for pr in tcas:tcas schedule:schedule schedule2:schedule2 totinfo:tot_info \
          printtokens:print_tokens printtokens2:print_tokens2 replace:replace; do
  dir=${pr%%:*}; stem=${pr##*:}
  mkdir -p "$out/src/$dir"
  cp "$siemens/$dir/source.alt/source.orig/"*.[ch] "$out/src/$dir/" 2> /dev/null || true
  for k in CC MCC GACC WM; do
    d=$out/siemens/$stem/$k
    "$bin" annotate --criteria "$k" -o "$d" "$out/src/$dir/$stem.c" > /dev/null
    "$bin" prune --jobs 2 --no-progress "$d/${stem}_labels.c" > "$d/prune.txt" 2>&1
  done
done
for f in "$corpus"/zlib-1.3.2/preprocessed/*.i; do
  s=$(basename "$f" .i); d=$out/zlib/$s
  "$bin" annotate --criteria CC -o "$d" "$f" > /dev/null
  "$bin" prune --jobs 2 --no-progress "$d/${s}_labels.c" > "$d/prune.txt" 2>&1
done
echo "outputs.sh: wrote $out"
