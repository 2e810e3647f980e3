#!/usr/bin/env bash
# Mirror benchmark (issue 30: updates without the internet). In one run:
#   - machine A installs a ~MEGABYTES region published by `mapgate publish` (signed) from nginx;
#   - `mapgate mirror` writes it to a folder: wall time (hyperfine) and disk, per GB of regions;
#   - machine B syncs it from A's `serve --share` of that folder, beside the same sync from nginx
#     serving the same folder (the baseline), interleaved by hyperfine, medians and the ratio.
# Usage: bench/mirror.sh [MEGABYTES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes=${1:-200}
runs=${2:-5}
scripts/install-deps
need=()
for tool in nginx:nginx-light hyperfine:hyperfine; do command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}"); done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d /tmp/mapgate-mirror-bench.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

source bench/bench-env.sh
bench_build

# The publisher: a region of barely compressible tiles, published and signed.
python3 bench/make-package.py "$work/src" "$megabytes" >/dev/null
mkdir -p "$work/in" "$work/www"
gunzip -c "$work/src/big.mbtiles.gz" > "$work/in/big.mbtiles"
echo '{"big.mbtiles": {"version": "1"}}' > "$work/in/regions.json"
minisign -G -W -f -p "$work/key.pub" -s "$work/key.sec" >/dev/null
"$mapgate" publish "$work/in" --out "$work/www" --key "$work/key.sec" --quiet
pub=$(tail -n 1 "$work/key.pub")
bench_policy "\"trustedKeys\": [\"$pub\"], \"requireSignedCatalog\": true"

nport=$(free_port)
cat > "$work/nginx.conf" <<CONF
daemon on; pid $work/nginx.pid; error_log $work/nginx-error.log; worker_processes 2;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  types { application/json json; } default_type application/octet-stream;
  server { listen 127.0.0.1:$nport; root $work; } }
CONF
nginx -c "$work/nginx.conf"
echo "{\"catalogURL\": \"http://127.0.0.1:$nport/www/catalog.json\"}" > "$work/a.json"
XDG_STATE_HOME="$work/a-state" "$mapgate" sync big --quiet --config "$work/a.json" --data-dir "$work/a"
installed=$(stat -c %s "$work/a/regions/big.mbtiles")

# Writing the mirror (each run from nothing: a fresh folder).
XDG_STATE_HOME="$work/a-state" hyperfine --runs "$runs" --export-json "$work/mirror.json" \
  --prepare "rm -rf $work/stick" \
  -n mirror "$mapgate mirror $work/stick --quiet --config $work/a.json --data-dir $work/a"
disk=$(du -sb "$work/stick" | cut -f1)

# B syncs from A's share, and from nginx serving the same folder.
sport=$(free_port)
XDG_STATE_HOME="$work/a-state" "$mapgate" serve --port "$sport" --quiet --share "$work/stick" --config "$work/a.json" --data-dir "$work/a" &
pids+=($!)
sleep 1
echo '{}' > "$work/b.json"
hyperfine --runs "$runs" --export-json "$work/sync.json" \
  --prepare "rm -rf $work/b $work/b-state" \
  -n share "XDG_STATE_HOME=$work/b-state $mapgate sync big --quiet --from http://127.0.0.1:$sport --config $work/b.json --data-dir $work/b" \
  -n nginx "XDG_STATE_HOME=$work/b-state $mapgate sync big --quiet --from http://127.0.0.1:$nport/stick --config $work/b.json --data-dir $work/b"
cmp "$work/a/regions/big.mbtiles" "$work/b/regions/big.mbtiles"

python3 - "$work/mirror.json" "$work/sync.json" "$installed" "$disk" <<'PY'
import json, sys
mirror = json.load(open(sys.argv[1]))["results"][0]["median"]
sync = {r["command"]: r["median"] for r in json.load(open(sys.argv[2]))["results"]}
installed, disk = int(sys.argv[3]), int(sys.argv[4])
gb = installed / 1e9
print(f"region installed: {installed / 1e6:.1f} MB")
print(f"mapgate mirror: median {mirror:.2f} s ({mirror / gb:.1f} s per GB of regions); mirror on disk {disk / 1e6:.1f} MB ({disk / installed:.2f} x the installed size)")
print(f"sync --from: share {sync['share']:.2f} s, nginx {sync['nginx']:.2f} s, ratio {sync['share'] / sync['nginx']:.3f}")
PY
uptime
