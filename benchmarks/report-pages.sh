#!/usr/bin/env bash
# Regenerates the report pages the README shows, on tritype (benchmarks/programs):
# annotated for CC and MCC, pruned, measured on its tests, then
#   OUT/summary-tritype.md   `measure --markdown` (the pull-request summary)
#   OUT/audit-tritype.png    the source part of `audit --html`, drawn by headless Chromium
# Usage: benchmarks/report-pages.sh [OUT] [COVPRUNE]   (default: artifacts, target/release/covprune)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../artifacts}" && cd "${1:-$here/../artifacts}" && pwd)
bin=${2:-$here/../target/release/covprune}
work=$(mktemp -d /tmp/covprune-report-pages.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$here/programs/tritype.c" "$here/programs/tritype.tests" "$work/"
cd "$work"
"$bin" annotate tritype.c --criteria CC,MCC > /dev/null
"$bin" prune tritype_labels.c --no-progress > /dev/null
"$bin" measure tritype_labels.c --tests tritype.tests --markdown "$out/summary-tritype.md" > /dev/null
"$bin" audit tritype_labels.c --html audit.html > /dev/null
# Only the legend and the coloured source.
sed 's|</style>|body > *:not(.legend):not(pre.src){display:none} pre.src{margin-top:0}</style>|' audit.html > source.html
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
  --screenshot="$out/audit-tritype.png" --window-size=900,1000 "file://$work/source.html" 2> /dev/null
echo "wrote $out/summary-tritype.md and $out/audit-tritype.png" >&2
