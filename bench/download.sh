#!/usr/bin/env bash
# Download benchmark (issues: map packages, delta updates). Installs one ~200 MB gzip region package served by
# nginx on 127.0.0.1 and compares, in the same run:
#   mapgate sync big      (download + SHA-256 + gunzip while streaming, validate, atomic install)
#   curl -o && sha256sum && gunzip   (the baseline: the same work as three separate steps)
# and reports mapgate's peak memory (GNU time). Usage: bench/download.sh [MEGABYTES] [RUNS]
# Each run starts after `sync`, so that the writeback of the run before does not fall on it.
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-200}
runs=${2:-5}
scripts/install-deps --runtime
need=()
for tool in nginx:nginx-light hyperfine:hyperfine /usr/bin/time:time curl:curl; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}")
done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d /tmp/mapgate-bench.XXXXXX)
chmod 755 "$work"
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
python3 bench/make-package.py "$work/www" "$megabytes"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
daemon on; pid $work/nginx.pid; error_log $work/nginx-error.log; worker_processes 1;
events { worker_connections 1024; }
http { access_log off; sendfile on;
  server { listen 127.0.0.1:$port; root $work/www; } }
CONF
nginx -c "$work/nginx.conf"
url="http://127.0.0.1:$port"

# MAPGATE_BINARY=path: that binary instead of a fresh release build (to compare revisions).
source bench/bench-env.sh
bench_build
echo "{\"catalogURL\": \"$url/catalog.json\"}" > "$work/config.json"

# MAPGATE_BEFORE=path: another revision's bench_build, run as a third command in the same rounds.
before=()
if [ -n "${MAPGATE_BEFORE:-}" ]; then
  before=(-n mapgate-before "$MAPGATE_BEFORE sync big --quiet --config $work/config.json --data-dir $work/data")
fi
hyperfine --runs "$runs" --export-json "$work/hyperfine.json" \
  --prepare "rm -rf $work/data $work/base; mkdir -p $work/base; sync" \
  -n mapgate "$mapgate sync big --quiet --config $work/config.json --data-dir $work/data" \
  "${before[@]}" \
  -n curl+sha256sum+gunzip "curl -s -o $work/base/big.gz $url/big.mbtiles.gz && sha256sum $work/base/big.gz >/dev/null && gunzip -c $work/base/big.gz > $work/base/big.mbtiles"

rm -rf "$work/data" "$work/state"
/usr/bin/time -f "%M" -o "$work/rss" "$mapgate" sync big --quiet --config "$work/config.json" --data-dir "$work/data"

# What one sync has the disk write, by the device's own count of sectors written (field 7 of
# /sys/class/block/DEV/stat; other writers on the machine count too): the region's file must
# reach the disk before it is installed, and nothing else need.
disk=/sys/class/block/$(basename "$(df --output=source "$work" | tail -1)")/stat
disk_written() {
  rm -rf "$work/data" "$work/state"
  sync
  local before after
  before=$(awk '{print $7}' "$disk")
  "$1" sync big --quiet --config "$work/config.json" --data-dir "$work/data"
  after=$(awk '{print $7}' "$disk")
  echo "$2 had the disk write $(((after - before) * 512 / 1000000)) MB (the installed file: $(($(stat -c %s "$work/data/regions/big.mbtiles") / 1000000)) MB)"
}
if [ -r "$disk" ]; then
  disk_written "$mapgate" mapgate
  if [ -n "${MAPGATE_BEFORE:-}" ]; then disk_written "$MAPGATE_BEFORE" mapgate-before; fi
fi
python3 - "$work/hyperfine.json" "$work/rss" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
m, b = results["mapgate"]["median"], results["curl+sha256sum+gunzip"]["median"]
rss = int(open(sys.argv[2]).read().split()[-1]) / 1024
print(f"median wall time: mapgate {m:.2f} s, curl+sha256sum+gunzip {b:.2f} s, ratio {m / b:.3f}")
if "mapgate-before" in results:
    o = results["mapgate-before"]["median"]
    print(f"mapgate-before {o:.2f} s, ratio {o / b:.3f}; mapgate/mapgate-before {m / o:.3f}")
print(f"mapgate peak memory (max RSS): {rss:.1f} MB (goal <= 32 MB)")
PY
