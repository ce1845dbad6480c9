#!/bin/sh
# Proves one C file as a Slurm job array and checks the merged result against one unsharded
# run: annotates FILE for CRITERIA (default CC) twice into OUT, prunes one copy in one run and
# the other as N array tasks (`prune --shard K/N`), merges the shards, and compares the ledgers
# and labels files (and hyperlabels files) byte for byte. Needs a running cluster (one-node-cluster.sh) and
# SLURM_CONF; COVPRUNE: the covprune binary (default: covprune on PATH).
# Usage: shard-array.sh FILE N OUT [CRITERIA]
set -eu
file=$1
n=$2
out=$(mkdir -p "$3" && cd "$3" && pwd)
criteria=${4:-CC}
covprune=$(command -v "${COVPRUNE:-covprune}")
base=$(basename "$file")
stem=${base%.*}_labels
rm -rf "$out/whole" "$out/sharded"
"$covprune" annotate "$file" --criteria "$criteria" -o "$out/whole" >/dev/null
"$covprune" annotate "$file" --criteria "$criteria" -o "$out/sharded" >/dev/null
start=$(date +%s)
"$covprune" prune "$out/whole/$stem.c" --no-progress --jobs "$(nproc)" >/dev/null
whole_s=$(( $(date +%s) - start ))
start=$(date +%s)
sbatch --wait --array=1-"$n" --cpus-per-task=1 --output="$out/task-%a.log" \
    --job-name=covprune-shards \
    --wrap "\"$covprune\" prune \"$out/sharded/$stem.c\" --no-progress --jobs 1 --shard \$SLURM_ARRAY_TASK_ID/$n" \
    >"$out/sbatch.log"
array_s=$(( $(date +%s) - start ))
"$covprune" merge "$out/sharded/$stem".shard-*-of-"$n".json >/dev/null
same() { cmp -s "$out/whole/$1" "$out/sharded/$1" && echo yes || echo NO; }
ledger=$(same "$stem.covprune.json")
labels=$(same "$stem.labels")
# Hyperlabel criteria: their statuses too.
if [ -f "$out/whole/$stem.hyperlabels" ] && [ "$(same "$stem.hyperlabels")" = NO ]; then
    labels=NO
fi
tasks=$(ls "$out/sharded/$stem".shard-*-of-"$n".json | wc -l)
cat <<REPORT
| file | criteria | array tasks | shard files | unsharded s | array s | ledger identical | labels identical |
|---|---|---|---|---|---|---|---|
| $(basename "$file") | $criteria | $n | $tasks | $whole_s | $array_s | $ledger | $labels |
REPORT
[ "$ledger" = yes ] && [ "$labels" = yes ]
