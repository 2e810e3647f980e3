#!/usr/bin/env bash
# PMTiles benchmark (issue 39). In one run, on one generated region (every tile of zooms 0..ZOOM,
# random bytes behind a PNG signature, 100 B to 2 KB each like vector tiles, a tenth of them one
# shared "ocean" tile), made as MBTiles and converted to PMTiles by the reference writer:
#   publish from the PMTiles archive  vs  publish from the same region's MBTiles file   (goal ≤ 1.2)
#   mapgate export of the installed region  vs  python pmtiles-convert of the same MBTiles (goal ≤ 1.0)
# under hyperfine, medians and ratios. Needs python pmtiles (scripts/install-deps) and hyperfine.
# Usage: bench/pmtiles.sh [ZOOM] [RUNS]   (default zoom 8: 87,381 tiles; 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
zoom=${1:-8}
runs=${2:-5}
tools=/usr/local/lib/mapgate-test-tools/python
[ -f "$tools/pmtiles/convert.py" ] || scripts/install-deps
need=()
for tool in hyperfine:hyperfine minisign:minisign; do command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}"); done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d /tmp/mapgate-pmtiles-bench.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
source bench/bench-env.sh
bench_build

python3 - "$work/region.mbtiles" "$zoom" <<'PY'
import random, sqlite3, sys
path, maxzoom = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(path)
db.executescript("""
    PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
    CREATE TABLE metadata (name TEXT, value TEXT);
    CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
    CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
""")
db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "Benchmark"), ("format", "png"), ("version", "1"),
               ("minzoom", "0"), ("maxzoom", str(maxzoom)), ("bounds", "-180,-85,180,85")])
rng = random.Random(39)
ocean = b"\x89PNG\r\n\x1a\n" + rng.randbytes(300)
for z in range(maxzoom + 1):
    rows = []
    for x in range(2 ** z):
        for y in range(2 ** z):
            body = ocean if rng.random() < 0.1 else b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(100, 2000))
            rows.append((z, x, y, body))
    db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
db.commit()
PY
convert="python3 $tools/pmtiles-3.8.1.data/scripts/pmtiles-convert"
export PYTHONPATH=$tools
$convert "$work/region.mbtiles" "$work/region.pmtiles" >/dev/null 2>&1
mkdir -p "$work/in-mbtiles" "$work/in-pmtiles"
cp "$work/region.mbtiles" "$work/in-mbtiles/region.mbtiles"
cp "$work/region.pmtiles" "$work/in-pmtiles/region.pmtiles"
echo '{"region.mbtiles": {"version": "1"}}' > "$work/in-mbtiles/regions.json"
echo '{"region.pmtiles": {"version": "1"}}' > "$work/in-pmtiles/regions.json"
tiles=$(sqlite3 "$work/region.mbtiles" "SELECT count(*) FROM tiles")
awk -v t="$tiles" -v z="$zoom" -v m="$(stat -c %s "$work/region.mbtiles")" -v p="$(stat -c %s "$work/region.pmtiles")" \
  'BEGIN { printf "region: %d tiles to zoom %d; MBTiles %.1f MB, PMTiles %.1f MB\n", t, z, m / 1e6, p / 1e6 }'
minisign -G -W -f -p "$work/key.pub" -s "$work/key.sec" >/dev/null
echo '{}' > "$work/config.json"
mkdir -p "$work/tmp"
export TMPDIR=$work/tmp

# 1. publish: the same region from PMTiles and from MBTiles, each into a fresh folder.
hyperfine --runs "$runs" --export-json "$work/publish.json" \
  --prepare "rm -rf $work/out-mbtiles $work/out-pmtiles; cat $work/region.mbtiles $work/region.pmtiles > /dev/null" \
  -n "publish from PMTiles" "$mapgate publish $work/in-pmtiles --out $work/out-pmtiles --key $work/key.sec --quiet --config $work/config.json" \
  -n "publish from MBTiles" "$mapgate publish $work/in-mbtiles --out $work/out-mbtiles --key $work/key.sec --quiet --config $work/config.json"

# 2. export: the installed region (synced from the publish above through a file: catalog) against
# the reference converter of the same tiles.
"$mapgate" publish "$work/in-mbtiles" --out "$work/out-mbtiles" --key "$work/key.sec" --base-url "file://$work/out-mbtiles" --quiet --config "$work/config.json"
pub=$(tail -n 1 "$work/key.pub")
bench_policy "\"trustedKeys\": [\"$pub\"], \"requireSignedCatalog\": true"
echo "{\"catalogURL\": \"file://$work/out-mbtiles/catalog.json\"}" > "$work/user.json"
"$mapgate" sync region --quiet --config "$work/user.json" --data-dir "$work/data"
cmp -s <(sqlite3 "$work/data/regions/region.mbtiles" "SELECT count(*) FROM tiles") <(echo "$tiles")
hyperfine --runs "$runs" --export-json "$work/export.json" \
  --prepare "rm -f $work/exported.pmtiles $work/converted.pmtiles; cat $work/data/regions/region.mbtiles > /dev/null" \
  -n "mapgate export" "$mapgate export region $work/exported.pmtiles --quiet --config $work/user.json --data-dir $work/data" \
  -n "pmtiles-convert" "$convert $work/data/regions/region.mbtiles $work/converted.pmtiles"
rm -f "$work/exported.pmtiles" "$work/converted.pmtiles"
"$mapgate" export region "$work/exported.pmtiles" --quiet --config "$work/user.json" --data-dir "$work/data"
$convert "$work/data/regions/region.mbtiles" "$work/converted.pmtiles" >/dev/null 2>&1

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
def results(name):
    return {r["command"]: r for r in json.load(open(f"{work}/{name}.json"))["results"]}
for name, ours, theirs, goal in (("publish", "publish from PMTiles", "publish from MBTiles", 1.2), ("export", "mapgate export", "pmtiles-convert", 1.0)):
    r = results(name)
    m, b = r[ours]["median"], r[theirs]["median"]
    print(f"{name}: median {ours} {m:.2f} s, {theirs} {b:.2f} s, ratio {m / b:.2f} (goal <= {goal})")
    for command in (ours, theirs):
        x = r[command]
        print(f"  {command}: mean {x['mean']:.2f} s ± {x['stddev'] or 0:.2f}, user {x['user']:.2f} s, system {x['system']:.2f} s")
print(f"archive sizes: mapgate export {os.path.getsize(work + '/exported.pmtiles') / 1e6:.1f} MB, pmtiles-convert {os.path.getsize(work + '/converted.pmtiles') / 1e6:.1f} MB")
PY
