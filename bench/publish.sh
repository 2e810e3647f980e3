#!/usr/bin/env bash
# Publish benchmark (issue: mapgate publish). Publishes one large MBTiles region into a fresh
# OUT_DIR and compares, in the same run:
#   mapgate publish     (checks, agg_tiles_hash, deterministic gzip -6 + SHA-256 in one pass,
#                        base copy, signed catalog)
#   gzip -6 -c FILE > out.gz && sha256sum out.gz   (the baseline: compress, then hash)
# Usage: bench/publish.sh [MEGABYTES] [RUNS]   (default 360 MB, 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-360}
runs=${2:-5}
need=()
for tool in hyperfine:hyperfine minisign:minisign; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d /tmp/mapgate-publish-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
# make-package.py writes a gzip package of pseudo-random PNG-signed tiles (barely compressible,
# like real imagery); the benchmark's input is the MBTiles file inside it.
python3 bench/make-package.py "$work/gen" "$megabytes" >/dev/null
mkdir -p "$work/in"
gzip -dc "$work/gen/big.mbtiles.gz" > "$work/in/big.mbtiles"
rm -rf "$work/gen"
echo '{"big.mbtiles": {"version": "1"}}' > "$work/in/regions.json"
minisign -G -W -p "$work/key.pub" -s "$work/key.sec" >/dev/null
ls -l "$work/in/big.mbtiles" | awk '{printf "input: %.0f MB MBTiles\n", $5 / 1e6}'

source bench/bench-env.sh
bench_build
echo '{}' > "$work/config.json"

hyperfine --runs "$runs" --export-json "$work/hyperfine.json" \
  --prepare "rm -rf $work/out $work/base; mkdir -p $work/base; cat $work/in/big.mbtiles > /dev/null" \
  -n publish "$mapgate publish $work/in --out $work/out --key $work/key.sec --quiet --config $work/config.json" \
  -n gzip+sha256sum "gzip -6 -c $work/in/big.mbtiles > $work/base/out.gz && sha256sum $work/base/out.gz >/dev/null"

# hyperfine's --prepare removed the last outputs: make each once more to compare their sizes.
rm -rf "$work/out" && "$mapgate" publish "$work/in" --out "$work/out" --key "$work/key.sec" --quiet --config "$work/config.json"
gzip -6 -c "$work/in/big.mbtiles" > "$work/base/out.gz"
python3 - "$work/hyperfine.json" "$work/out/packages/big-1.mbtiles.gz" "$work/base/out.gz" <<'PY'
import json, os, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
m, b = results["publish"]["median"], results["gzip+sha256sum"]["median"]
print(f"median wall time: publish {m:.2f} s, gzip -6 + sha256sum {b:.2f} s, ratio {m / b:.2f}")
for name in ("publish", "gzip+sha256sum"):
    r = results[name]
    print(f"  {name}: mean {r['mean']:.2f} s ± {r['stddev']:.2f}, user {r['user']:.2f} s, system {r['system']:.2f} s")
print(f"package sizes: publish {os.path.getsize(sys.argv[2]) / 1e6:.1f} MB, gzip -6 {os.path.getsize(sys.argv[3]) / 1e6:.1f} MB")
PY
