#!/usr/bin/env bash
# Labels change nothing a build or a run of the Siemens programs sees. Annotated programs are
# built with the recording runtime `covprune measure` uses (`covprune runtime`):
#  1. every criterion's annotated file gets with -Wall -Wextra no warning the original does not
#     get (a warning being its message without its place);
#  2. annotated with every criterion at once, the original and the annotated program built
#     with UBSan (-fsanitize=undefined
#     -fno-sanitize-recover=all) run every line of the SIR universe: no UBSan report the
#     original does not give, and the same output.
# Writes OUT (markdown) and prints it.
#
# usage: benchmarks/siemens-ubsan.sh SIEMENS_DIR OUT [COVPRUNE]
# SIEMENS_DIR: a checkout of houzss/Software-Fault-Location-By-SiemensSuite (never committed).
set -euo pipefail
dir=${1:?usage: siemens-ubsan.sh SIEMENS_DIR OUT [COVPRUNE]}
out=${2:?usage: siemens-ubsan.sh SIEMENS_DIR OUT [COVPRUNE]}
bin=${3:-$(cd "$(dirname "$0")/.." && pwd)/target/release/covprune}
dir=$(cd "$dir" && pwd)
work=$(mktemp -d /tmp/covprune-ubsan.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The recording runtime `covprune measure` builds with: labels evaluate and record.
"$bin" runtime -o "$work/rt" > /dev/null
rt_h=$work/rt/covprune_runtime.h rt_c=$work/rt/covprune_runtime.c
# Runs every universe line on both programs: tests, tests where the original reports UB,
# tests with a UBSan report the original does not give, tests whose output differs.
cat > "$work/compare.py" <<'EOF'
import re, subprocess, sys
universe, cwd, orig, ann = sys.argv[1:]
def reports(exe, line):
    try:
        r = subprocess.run(["sh", "-c", f"{exe} {line}"], cwd=cwd, capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return None, set()
    # What UBSan says, without where (the two files' paths and columns differ).
    return r.stdout, set(re.findall(rb"runtime error: (.*)", r.stderr))
tests = own = new = differ = 0
for line in open(universe, encoding="latin-1"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    tests += 1
    o_out, o_said = reports(orig, line)
    a_out, a_said = reports(ann, line)
    own += bool(o_said)
    new += bool(a_said - o_said)
    differ += o_out != a_out
print(f"{tests} | {own} | {new} | {differ}")
EOF
criteria=$("$bin" criteria | awk '{print $1}' | grep -E '^[A-Z][A-Z-]*$' | paste -sd' ')
programs="tcas:tcas:tcas.c totinfo:tot_info:tot_info.c schedule:schedule:schedule.c schedule2:schedule2:schedule2.c printtokens:print_tokens:print_tokens.c printtokens2:print_tokens2:print_tokens2.c replace:replace:replace.c"
{
  echo "# Siemens programs: labels add no warning and no undefined behaviour"
  echo
  echo "\`benchmarks/siemens-ubsan.sh SIEMENS_DIR OUT\` ($(date -u +%Y-%m-%d), $("$bin" --version))."
  echo "Built with the recording runtime \`measure\` uses (\`covprune runtime\`). Warnings: every criterion's annotated file built with"
  echo "\`-Wall -Wextra\`, its warnings (each its message without its place) beside the original's."
  echo "UBSan: every criterion annotated at once, original and annotated program built with"
  echo "\`-fsanitize=undefined -fno-sanitize-recover=all\`, every line of the SIR universe run by \`sh\`"
  echo "on both; a report is UBSan's message without its place (the files differ)."
  echo
  echo "| program | criteria with no new warning | new warnings | tests | tests where the original reports UB | tests with a new UBSan report | tests whose output differs |"
  echo "|---|---|---|---|---|---|---|"
} > "$out"
for p in $programs; do
  IFS=: read -r folder name file <<< "$p"
  src="$dir/$folder/source.alt/source.orig/$file"
  cwd="$dir/$folder"
  [ -d "$cwd/inputs" ] && cwd="$cwd/inputs"
  lm=()
  [ "$name" = tot_info ] && lm=(-lm)
  # A warning is its message without its place; the original's own are not the labels'.
  warnings() { cc -c -Wall -Wextra -I"$(dirname "$src")" -o /dev/null "$@" 2>&1 | sed -n 's/^[^ ]*: \(warning\|error\): /\1: /p' | sort -u; }
  warnings "$src" > "$work/own.txt"
  built=0; warned=()
  for c in $criteria; do
    "$bin" annotate "$src" --criteria "$c" -o "$work/$name-$c" > /dev/null
    warnings "$work/$name-$c/${file%.c}_labels.c" -include "$rt_h" > "$work/theirs.txt"
    new=$(comm -13 "$work/own.txt" "$work/theirs.txt")
    if [ -z "$new" ]; then
      built=$((built + 1))
    else
      warned+=("$c: $(echo "$new" | head -1)")
    fi
  done
  "$bin" annotate "$src" --criteria "$(echo "$criteria" | tr ' ' ',')" -o "$work/$name-ubsan" > /dev/null
  ubsan=(-w -fsanitize=undefined -fno-sanitize-recover=all)
  cc "${ubsan[@]}" -o "$work/$name-orig" "$src" "${lm[@]}"
  cc "${ubsan[@]}" -include "$rt_h" -I"$(dirname "$src")" -o "$work/$name-ann" \
    "$work/$name-ubsan/${file%.c}_labels.c" "$rt_c" "${lm[@]}"
  row=$(python3 "$work/compare.py" "$dir/$folder/testplans.alt/universe" "$cwd" "$work/$name-orig" "$work/$name-ann")
  n=$(echo "$criteria" | wc -w)
  echo "| $name | $built of $n | ${warned[*]:-none} | $row |" >> "$out"
  echo "siemens-ubsan: $name done" >&2
done
cat "$out"
