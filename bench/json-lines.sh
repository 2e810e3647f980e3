#!/usr/bin/env bash
# --json output benchmark. `mapgate catalog` over a local catalog of N regions (default 50,000),
# as the text table and as JSON Lines (each line an Encodable struct, through JSONValueEncoder and
# JSONLine), side by side in the same hyperfine run; and `catalog --json` of the build at BASE (a
# git revision, default 278e608, which wrote the lines from dictionaries) when given. Prints
# hyperfine's table. Usage: bench/json-lines.sh [N] [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-50000}
base=${2:-}
work=$(mktemp -d /tmp/mapgate-json-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
source bench/bench-env.sh
swift build -c release --static-swift-stdlib --product mapgate >/dev/null
cp .build/release/mapgate "$work/mapgate"
python3 - "$count" "$work/catalog.json" <<'PYTHON'
import json, sys
count, path = int(sys.argv[1]), sys.argv[2]
regions = [{"id": f"r{i:06d}", "name": f"Region {i}", "version": "1", "url": f"packages/r{i:06d}.mbtiles.gz", "size": 1000 + i,
            "sha256": "0" * 64, "installedSize": 4096 + i, "format": "png", "minzoom": 0, "maxzoom": 5} for i in range(count)]
json.dump({"formatVersion": 1, "publisher": "Bench", "regions": regions}, open(path, "w"))
PYTHON
echo "{\"catalogURL\": \"file://$work/catalog.json\"}" > "$work/config.json"
commands=("$work/mapgate catalog --config $work/config.json --data-dir $work/data" "$work/mapgate catalog --json --config $work/config.json --data-dir $work/data")
if [ -n "$base" ]; then
  git worktree add -q --detach "$work/base" "$base"
  (cd "$work/base" && swift build -c release --static-swift-stdlib --product mapgate >/dev/null)
  commands+=("$work/base/.build/release/mapgate catalog --json --config $work/config.json --data-dir $work/data")
fi
echo "catalog of $count regions ($(stat -c %s "$work/catalog.json") bytes)"
hyperfine --warmup 1 --runs 5 --output=null "${commands[@]}"
if [ -n "$base" ]; then git worktree remove --force "$work/base"; fi
