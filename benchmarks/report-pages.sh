#!/usr/bin/env bash
# Regenerates the report pages the README shows, on a real library with its own tests: cJSON
# (Debian's source package, as benchmarks/fetch-debian-projects.sh builds it with CMake),
# its cJSON.c annotated for CC and MCC by `covprune project`, measured by `project measure`
# on its own ctest suite, then
#   OUT/summary-cjson.md   `project measure --markdown` (the pull-request summary)
#   OUT/audit-cjson.png    the source part of `audit --html` from `ensure` (cJSON.c:439) on,
#                          drawn by headless Chromium
# Runs in a scratch directory: the projects' trees are not written.
# Usage: benchmarks/report-pages.sh PROJECTS [OUT] [COVPRUNE]
#   PROJECTS from benchmarks/fetch-debian-projects.sh; default OUT artifacts, COVPRUNE
#   target/release/covprune. About 4 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
projects=$(cd "${1:?usage: report-pages.sh PROJECTS [OUT] [COVPRUNE]}" && pwd)
out=$(mkdir -p "${2:-$here/../artifacts}" && cd "${2:-$here/../artifacts}" && pwd)
bin=$(cd "$(dirname "${3:-$here/../target/release/covprune}")" && pwd)/$(basename "${3:-covprune}")
[ -f "$projects/cjson-build/compile_commands.json" ] || {
  echo "report-pages: $projects has no cjson-build (run benchmarks/fetch-debian-projects.sh $projects)" >&2
  exit 1
}
work=$(mktemp -d /tmp/covprune-report-pages.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" project -p "$projects/cjson-build" --criteria CC,MCC --files cJSON.c -o out --no-progress > /dev/null 2>&1
"$bin" project measure -o out --test-cmd "cmake --build . && ctest" --markdown "$out/summary-cjson.md" > /dev/null 2>&1
"$bin" audit out/cJSON_labels.c --html audit.html > /dev/null
# Only the legend and the coloured source, from `ensure` on.
sed 's|</style>|body > *:not(.legend):not(pre.src){display:none} pre.src{margin-top:0}</style>|' audit.html \
  | perl -0pe 's|<pre class="src">.*?(<span class="line[^"]*" id="L439">)|<pre class="src">$1|s' > source.html
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$work/profile" \
  --screenshot="$out/audit-cjson.png" --window-size=1000,1000 "file://$work/source.html" 2> /dev/null
echo "wrote $out/summary-cjson.md and $out/audit-cjson.png" >&2
