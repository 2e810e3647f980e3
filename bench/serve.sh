#!/usr/bin/env bash
# Serving benchmark (issue: open and serve). wrk on loopback, 64 connections, random existing
# tiles of a 21,845-tile region, against three servers in the same run:
#   mapgate serve                      (our HTTP server over the MBTiles file)
#   nginx                              (the same tiles as static files; the baseline)
#   datasette + datasette-tiles (PyPI) (the Python MBTiles server)
# Reports requests/s and p99 latency for each (medians over the rounds), the ratios to nginx, and
# mapgate's memory (RSS) idle, after the first round (64 workers warmed up) and after the last.
# Then the same with 10,000 connections held open and idle (bench/loadgen.py hold) while wrk's
# 64 are busy, against mapgate and nginx, with mapgate's RSS while they are held.
# Usage: bench/serve.sh [SECONDS] [ROUNDS] [IDLE_CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
rounds=${2:-3}
idle=${3:-10000}
ulimit -n "$(ulimit -Hn)"
scripts/install-deps --runtime
need=()
for tool in nginx:nginx-light wrk:wrk; do command -v "${tool%%:*}" >/dev/null || need+=("${tool##*:}"); done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi

work=$(mktemp -d /tmp/mapgate-serve-bench.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
python3 bench/make-tiles.py "$work" 7
python3 -m venv "$work/venv" >/dev/null
"$work/venv/bin/pip" install -q datasette datasette-tiles >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# mapgate: install the region through a file:// catalog, then serve it.
swift build -c release --static-swift-stdlib --product mapgate >/dev/null
mapgate=$PWD/.build/release/mapgate
size=$(stat -c %s "$work/bench.mbtiles")
sha=$(sha256sum "$work/bench.mbtiles" | cut -d' ' -f1)
cat > "$work/catalog.json" <<JSON
{"formatVersion": 1, "publisher": "bench", "regions": [{"id": "bench", "name": "bench", "version": "1",
 "url": "file://$work/bench.mbtiles", "size": $size, "sha256": "$sha", "installedSize": $size, "format": "png",
 "minzoom": 0, "maxzoom": 7}]}
JSON
echo "{\"catalogURL\": \"file://$work/catalog.json\"}" > "$work/config.json"
# The bench catalog is not signed: a managed policy of its own says so (and reaches no store).
echo '{"requireSignedCatalog": false, "lookupURL": "http://127.0.0.1:1/lookup", "allowInsecureLookup": true}' > "$work/policy.json"
export MAPGATE_POLICY="$work/policy.json" XDG_STATE_HOME="$work/state"
"$mapgate" sync bench --quiet --config "$work/config.json" --data-dir "$work/data"
mport=$(free_port)
"$mapgate" serve --port "$mport" --quiet --config "$work/config.json" --data-dir "$work/data" &
pids+=($!)
mpid=$!

nport=$(free_port)
cat > "$work/nginx.conf" <<CONF
daemon on; pid $work/nginx.pid; error_log $work/nginx-error.log; worker_processes auto;
worker_rlimit_nofile 30000;
events { worker_connections 12000; }
http { access_log off; sendfile on; keepalive_requests 1000000;
  server { listen 127.0.0.1:$nport; root $work/www; } }
CONF
nginx -c "$work/nginx.conf"

dport=$(free_port)
(cd "$work" && exec "$work/venv/bin/datasette" serve bench.mbtiles --port "$dport" >/dev/null 2>&1) &
pids+=($!)
sleep 3
curl -sf -o /dev/null "http://127.0.0.1:$mport/bench/0/0/0.png"
curl -sf -o /dev/null "http://127.0.0.1:$nport/bench/0/0/0.png"
curl -sf -o /dev/null "http://127.0.0.1:$dport/-/tiles/bench/0/0/0.png"

rss() { ps -o rss= -p "$mpid" | tr -d ' '; }
before=$(rss)
run() { # name url-prefix port
  TILE_PREFIX=$2 wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/paths.lua" "http://127.0.0.1:$3" > "$work/wrk-$1-$round.txt"
}
for round in $(seq "$rounds"); do
  run mapgate "" "$mport"
  [ "$round" -eq 1 ] && warm=$(rss)
  run nginx "" "$nport"
  run datasette "/-/tiles" "$dport"
done
after=$(rss)
# IDLE_CONNECTIONS open in all (64 of them wrk's, busy; the rest idle, held by loadgen.py for
# less than the 30 s idle timeout), against each server; then mapgate's RSS with IDLE_CONNECTIONS idle.
held_seconds=$((seconds + 8))
for name in mapgate nginx; do
  port=$mport; [ "$name" = nginx ] && port=$nport
  python3 bench/loadgen.py hold "$port" $((idle - 64)) "$held_seconds" > "$work/hold-$name.txt" &
  holder=$!
  sleep 5
  TILE_PREFIX="" wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/paths.lua" "http://127.0.0.1:$port" > "$work/wrk-$name-idle.txt"
  wait "$holder"
  sed "s/^/$name /" "$work/hold-$name.txt"
done
# Each held connection first asks for /health, so it idles as a keep-alive connection after an
# answer (the costly case: libmicrohttpd keeps its buffer), not one that never sent a request.
python3 bench/loadgen.py hold "$mport" "$idle" 12 --request /health > "$work/hold-rss.txt" &
holder=$!
sleep 8
held_rss=$(rss)
wait "$holder"
python3 - "$work" "$rounds" "$before" "$warm" "$after" "$held_rss" "$idle" <<'PY'
import re, statistics, sys
work, rounds, before, warm, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
held_rss, idle = int(sys.argv[6]), int(sys.argv[7])
def parse(name, r):
    text = open(f"{work}/wrk-{name}-{r}.txt").read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rps, ms, int(errors.group(1)) if errors else 0
res = {n: [parse(n, r) for r in range(1, rounds + 1)] for n in ("mapgate", "nginx", "datasette")}
med = {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), sum(x[2] for x in v)) for n, v in res.items()}
for n, (rps, p99, errors) in med.items():
    print(f"{n:10s} median {rps:10.0f} req/s   p99 {p99:8.2f} ms   non-2xx {errors}")
m, n, d = med["mapgate"], med["nginx"], med["datasette"]
print(f"mapgate/nginx req/s ratio {m[0] / n[0]:.2f} (goal >= 1.0); p99 ratio {m[1] / n[1]:.2f} (goal <= 1.0)")
print(f"mapgate/datasette-tiles req/s ratio {m[0] / d[0]:.1f} (goal > 1)")
print(f"mapgate RSS idle {before / 1024:.1f} MB, after round 1 {warm / 1024:.1f} MB, after round {rounds} {after / 1024:.1f} MB")
mi, ni = parse("mapgate", "idle"), parse("nginx", "idle")
print(f"with {idle} connections open ({idle - 64} idle, 64 busy): mapgate {mi[0]:.0f} req/s p99 {mi[1]:.2f} ms non-2xx {mi[2]}; nginx {ni[0]:.0f} req/s p99 {ni[1]:.2f} ms non-2xx {ni[2]}")
print(f"  mapgate/nginx req/s ratio {mi[0] / ni[0]:.2f} (goal >= 0.8); mapgate RSS with {idle} idle connections {held_rss / 1024:.1f} MB (limit 128 MB)")
PY
