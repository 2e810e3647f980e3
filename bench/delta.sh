#!/usr/bin/env bash
# Delta benchmark (issue: delta updates). One large region (make-package.py's barely compressible
# tiles) is published as version 1, then version 2 with 2 % of its tiles changed; nginx serves the
# tree on 127.0.0.1. Compared in the same run, from a client that has version 1 installed:
#   sync (delta)   mapgate sync big  — downloads the delta, applies it to a copy, validates, installs
#   sync (full)    mapgate sync big  — the same update from the full package (deltas not offered)
#   md5 (floor)    openssl dgst -md5 of the new version's file — the least that checking the
#                  result's agg_tiles_hash (MD5 over every tile, in order) can cost
# and prints the delta's size against the full package's. Usage: bench/delta.sh [MEGABYTES] [RUNS]
# With LINK_RATE set (nginx's limit_rate, bytes per second per connection: 12500k is 100 Mbit/s),
# nginx sends no faster than that, as over a real link; unset, loopback is as fast as it goes.
# MAPGATE_BASELINE=path also times that binary (another revision's bench_build) updating through
# the same delta, from the same client state, in the same hyperfine run.
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-360}
runs=${2:-5}
need=()
for tool in nginx:nginx-light hyperfine:hyperfine minisign:minisign sqlite3:sqlite3; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d /tmp/mapgate-delta-bench.XXXXXX)
chmod 755 "$work"
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
python3 bench/make-package.py "$work/gen" "$megabytes" >/dev/null
mkdir -p "$work/in" "$work/full-in"
gzip -dc "$work/gen/big.mbtiles.gz" > "$work/v1.mbtiles"
rm -rf "$work/gen"
cp "$work/v1.mbtiles" "$work/v2.mbtiles"
# 2 % of the tiles get new bytes (same size, new content after the PNG signature: publish checks it).
sqlite3 "$work/v2.mbtiles" "UPDATE tiles SET tile_data = x'89504E470D0A1A0A' || randomblob(length(tile_data) - 8) WHERE abs(random()) % 50 = 0;"
minisign -G -W -p "$work/key.pub" -s "$work/key.sec" >/dev/null

# MAPGATE_BINARY=path: that binary instead of a fresh release build (to compare revisions).
source bench/bench-env.sh
bench_build
echo '{}' > "$work/config.json"
publish() {  # publish FILE VERSION OUT
  cp "$1" "$work/in/big.mbtiles"
  echo "{\"big.mbtiles\": {\"version\": \"$2\"}}" > "$work/in/regions.json"
  "$mapgate" publish "$work/in" --out "$3" --key "$work/key.sec" --quiet --config "$work/config.json"
}
publish "$work/v1.mbtiles" 1 "$work/www"
cp -r "$work/www" "$work/www-full"           # the same history, later published without deltas
publish "$work/v2.mbtiles" 2 "$work/www"
publish "$work/v2.mbtiles" 2 "$work/www-full" && rm -f "$work"/www-full/packages/*delta* && \
  python3 - "$work/www-full/catalog.json" <<'PY'
import json, sys
path = sys.argv[1]
catalog = json.load(open(path))
for region in catalog["regions"]:
    region.pop("deltas", None)
json.dump(catalog, open(path, "w"), indent=2, sort_keys=True)
PY

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
daemon on; pid $work/nginx.pid; error_log $work/nginx-error.log; worker_processes 1;
events { worker_connections 1024; }
http { access_log off; sendfile on; ${LINK_RATE:+limit_rate $LINK_RATE;}
  server { listen 127.0.0.1:$port; location / { root $work; } } }
CONF
nginx -c "$work/nginx.conf"
echo "{\"catalogURL\": \"http://127.0.0.1:$port/www/catalog.json\"}" > "$work/delta.json"
echo "{\"catalogURL\": \"http://127.0.0.1:$port/www-full/catalog.json\"}" > "$work/full.json"

# A client with version 1 installed, saved once and restored before every run.
echo "{\"catalogURL\": \"file://$work/v1-tree/catalog.json\"}" > "$work/v1.json"
mkdir -p "$work/v1-tree" && publish "$work/v1.mbtiles" 1 "$work/v1-tree"
"$mapgate" sync big --quiet --config "$work/v1.json" --data-dir "$work/client-v1"
# The gate's state is saved and restored with the data: a state deleted while map data is
# installed needs a store lookup before the next use (the gate keeps a sealed copy), which a
# benchmark on 127.0.0.1 cannot make.
cp -r "$work/state" "$work/state-v1"
# The copy has a new inode and time, which a sync takes for a file changed behind its back and
# hashes whole (0.28 s here) before it trusts it as a delta's base; a user's installed file keeps
# its stamp. `list` records the copy's stamp (hashing it once, untimed), as the record would have it.
restore="rm -rf $work/client $work/state && cp -r $work/client-v1 $work/client && cp -r $work/state-v1 $work/state && $mapgate list --config $work/delta.json --data-dir $work/client >/dev/null"

command -v openssl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
baseline=()
if [ -n "${MAPGATE_BASELINE:-}" ]; then
  baseline=(--prepare "$restore" -n "sync (delta, baseline)" "$MAPGATE_BASELINE sync big --quiet --config $work/delta.json --data-dir $work/client")
fi
hyperfine --warmup 1 --runs "$runs" --export-json "$work/hyperfine.json" \
  --prepare "$restore" -n "sync (delta)" "$mapgate sync big --quiet --config $work/delta.json --data-dir $work/client" \
  "${baseline[@]}" \
  --prepare "$restore" -n "sync (full)" "$mapgate sync big --quiet --config $work/full.json --data-dir $work/client" \
  --prepare "true" -n "md5 (floor)" "openssl dgst -md5 $work/v2.mbtiles"

python3 - "$work/hyperfine.json" "$work/www/catalog.json" <<'PY'
import json, os, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
d, f, m = results["sync (delta)"]["median"], results["sync (full)"]["median"], results["md5 (floor)"]["median"]
region = json.load(open(sys.argv[2]))["regions"][0]
delta = region["deltas"][0]["size"]
print(f"delta {delta / 1e6:.1f} MB of a {region['size'] / 1e6:.1f} MB package: {100 * delta / region['size']:.1f} % (goal <= 5 %)")
rate = os.environ.get("LINK_RATE")
print(f"median wall time: sync by delta {d:.2f} s, full sync {f:.2f} s, ratio {d / f:.3f} (goal <= 0.6 on loopback)"
      + (f", nginx sending at most {rate} bytes/s" if rate else ", loopback unthrottled"))
print(f"MD5 of the new file alone (a whole-file result check's floor): {m:.2f} s, {m / f:.2f} of a full sync")
if "sync (delta, baseline)" in results:
    b = results["sync (delta, baseline)"]["median"]
    print(f"baseline binary by the same delta: {b:.2f} s, ratio {b / f:.3f}; this binary / baseline: {d / b:.3f}")
PY
