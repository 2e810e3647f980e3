#!/usr/bin/env bash
# Slow-client benchmark: a normal client's latency (p50/p99, 3,000 sequential keep-alive
# requests) alone, then while 50 clients send pipelined requests and never read and 500 trickle
# a request head one byte a second; how the bad clients end (408 at the head deadline; closed
# after the idle timeout); then SIGTERM under that attack, timed. 127.0.0.1 only, bounded.
# Usage: bench/attack.sh [NEVER_READ] [TRICKLE]
set -euo pipefail
cd "$(dirname "$0")/.."
never=${1:-50}
trickle=${2:-500}
ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d /tmp/mapgate-attack-bench.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
python3 bench/make-tiles.py "$work" 3 >/dev/null
source bench/bench-env.sh
bench_build
size=$(stat -c %s "$work/bench.mbtiles")
sha=$(sha256sum "$work/bench.mbtiles" | cut -d' ' -f1)
cat > "$work/catalog.json" <<JSON
{"formatVersion": 1, "publisher": "bench", "regions": [{"id": "bench", "name": "bench", "version": "1",
 "url": "file://$work/bench.mbtiles", "size": $size, "sha256": "$sha", "installedSize": $size, "format": "png",
 "minzoom": 0, "maxzoom": 3}]}
JSON
echo "{\"catalogURL\": \"file://$work/catalog.json\"}" > "$work/config.json"
"$mapgate" sync bench --quiet --config "$work/config.json" --data-dir "$work/data"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run() {
  "$mapgate" serve --port "$port" --quiet --config "$work/config.json" --data-dir "$work/data" &
  pid=$!
  sleep 1
}
echo "== bad clients against the head deadline (10 s) and the idle timeout (30 s)"
run
python3 bench/loadgen.py attack "$port" 40 --never-read "$never" --trickle "$trickle"
kill "$pid"; wait "$pid" || true
echo "== SIGTERM under attack"
run
python3 bench/loadgen.py attack "$port" 5 --never-read "$never" --trickle "$trickle" --pid "$pid"
wait "$pid" || true
pid=""
