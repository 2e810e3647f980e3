#!/usr/bin/env bash
# Glyph benchmark (issue: vector maps with labels). Starts `mapgate serve` (release build) with the
# real cities region installed and times, over loopback with curl:
#   cold: the first request of each glyph range (rendered with FreeType, distance field, protobuf)
#   warm: the same ranges again (from the in-memory cache), RUNS times each
#   beside them: a vector tile request and /health, the same way
# Prints medians in milliseconds. Usage: bench/glyphs.sh [RUNS]   (default 50)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
work=$(mktemp -d /tmp/mapgate-glyph-bench.XXXXXX)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
source bench/bench-env.sh
bench_build
fixture=../shared/fixtures/mbtiles/mbtileserver-world_cities.mbtiles
cp "$fixture" "$work/cities.mbtiles"
size=$(stat -c %s "$work/cities.mbtiles")
sha=$(sha256sum "$work/cities.mbtiles" | cut -d' ' -f1)
cat > "$work/catalog.json" <<CATALOG
{"formatVersion": 1, "publisher": "bench", "regions": [{"id": "cities", "name": "Cities", "version": "1",
 "url": "file://$work/cities.mbtiles", "size": $size, "sha256": "$sha", "installedSize": $((size + 65536)),
 "format": "pbf", "minzoom": 0, "maxzoom": 6, "bounds": [-180, -85, 180, 85]}]}
CATALOG
echo "{\"catalogURL\": \"file://$work/catalog.json\"}" > "$work/config.json"
"$mapgate" sync cities --config "$work/config.json" --data-dir "$work/data" >/dev/null
port=18777
"$mapgate" serve --port $port --config "$work/config.json" --data-dir "$work/data" >/dev/null 2>"$work/serve.log" &
server=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
font=$(curl -sf "http://127.0.0.1:$port/cities/style.json" | python3 -c 'import json,sys; s=json.load(sys.stdin); print([l for l in s["layers"] if l["type"]=="symbol"][0]["layout"]["text-font"][0])')
encoded=$(python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$font")
ranges=(0-255 256-511 1024-1279 8192-8447 65280-65535)
time_ms() { curl -s -o /dev/null -w '%{time_total}\n' "$1" | awk '{printf "%.3f\n", $1 * 1000}'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
echo "font: $font"
cold=$(for range in "${ranges[@]}"; do time_ms "http://127.0.0.1:$port/fonts/$encoded/$range.pbf"; done)
echo "cold glyph range (first request of ${#ranges[@]} ranges): median $(echo "$cold" | median) ms, max $(echo "$cold" | sort -n | tail -1) ms"
warm=$(for _ in $(seq "$runs"); do for range in "${ranges[@]}"; do time_ms "http://127.0.0.1:$port/fonts/$encoded/$range.pbf"; done; done)
echo "warm glyph range ($((runs * ${#ranges[@]})) requests): median $(echo "$warm" | median) ms"
tile=$(for _ in $(seq "$runs"); do time_ms "http://127.0.0.1:$port/cities/2/2/1.pbf"; done)
echo "vector tile (beside it, $runs requests): median $(echo "$tile" | median) ms"
health=$(for _ in $(seq "$runs"); do time_ms "http://127.0.0.1:$port/health"; done)
echo "/health (beside it, $runs requests): median $(echo "$health" | median) ms"
bytes=$(curl -s "http://127.0.0.1:$port/fonts/$encoded/0-255.pbf" | wc -c)
echo "range 0-255: $bytes bytes"
