#!/usr/bin/env bash
# Serving benchmark (issue 31). wrk on loopback (-t2 -c64), random existing tiles of zooms 4-7 of
# a raster region of 21,845 tiles, against:
#   mapgate serve   (our HTTP server over the MBTiles file; release build)
#   nginx           (the same tiles as static files; the baseline, configured as issue 31 says:
#                    worker_processes 2; access_log off; sendfile on; tcp_nopush on;
#                    keepalive_requests 100000)
# ROUNDS rounds, mapgate then nginx in each (interleaved, so a busy moment of the shared machine
# falls on both); every round's absolute figures of both are printed, then the medians and the
# ratios (req/s and p99). Then the same with IDLE_CONNECTIONS open (bench/loadgen.py hold keeps
# IDLE_CONNECTIONS - 64 idle, each after one request, while wrk's 64 are busy), ROUNDS rounds
# interleaved again, and mapgate's RSS at each stage.
#
# Usage: bench/serve.sh [SECONDS] [ROUNDS] [IDLE_CONNECTIONS]
#   MAPGATE_BINARY=path   serve with that binary instead of building one (to compare revisions)
#   BENCH_DATASETTE=1     also run datasette-tiles (PyPI, in a venv) each round: it is ~20x slower
#                         than both and takes a minute to install, so it is off by default
#   BENCH_IDLE=0          skip the idle-connection rounds
#   MAPGATE_SERVE_ARGS    more options for every mapgate serve (e.g. "--tile-cache 0": every
#                         request reads SQLite and makes its answer, the ETag's hash included)
#   MAPGATE_BASELINE=path also serve with that binary (another revision's bench_build), as
#                         "baseline", interleaved in every round; its ratio to mapgate is printed
#   MAPGATE_HTTP_LIBRARY  microhttpd: mapgate serves on libmicrohttpd instead of h2o, the default
#                         (the benchmarks' and tests' builds only; issue 42, item 2);
#                         BASELINE_HTTP_LIBRARY the same for the baseline (default microhttpd: the
#                         same binary as baseline compares the two libraries)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-8}
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
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "load before: $(uptime)"
python3 bench/make-tiles.py "$work" 7 4 >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# mapgate: install the region through a file:// catalog, then serve it.
source bench/bench-env.sh
bench_build
size=$(stat -c %s "$work/bench.mbtiles")
sha=$(sha256sum "$work/bench.mbtiles" | cut -d' ' -f1)
cat > "$work/catalog.json" <<JSON
{"formatVersion": 1, "publisher": "bench", "regions": [{"id": "bench", "name": "bench", "version": "1",
 "url": "file://$work/bench.mbtiles", "size": $size, "sha256": "$sha", "installedSize": $size, "format": "png",
 "minzoom": 0, "maxzoom": 7}]}
JSON
echo "{\"catalogURL\": \"file://$work/catalog.json\"}" > "$work/config.json"
# The bench catalog is not signed: bench-env.sh's policy says so (and points the lookup at nothing).
"$mapgate" sync bench --quiet --config "$work/config.json" --data-dir "$work/data"
mport=$(free_port)
# shellcheck disable=SC2086 # MAPGATE_SERVE_ARGS is a list of options
"$mapgate" serve --port "$mport" --quiet --config "$work/config.json" --data-dir "$work/data" ${MAPGATE_SERVE_ARGS:-} &
mpid=$!
pids+=("$mpid")
bport=""
if [ -n "${MAPGATE_BASELINE:-}" ]; then
  bport=$(free_port)
  # Its own data directory and state: two revisions' gate records must not meet.
  XDG_STATE_HOME="$work/state-baseline" "$MAPGATE_BASELINE" sync bench --quiet --config "$work/config.json" --data-dir "$work/data-baseline"
  # shellcheck disable=SC2086
  XDG_STATE_HOME="$work/state-baseline" MAPGATE_HTTP_LIBRARY=${BASELINE_HTTP_LIBRARY:-microhttpd} "$MAPGATE_BASELINE" serve --port "$bport" --quiet --config "$work/config.json" --data-dir "$work/data-baseline" ${MAPGATE_SERVE_ARGS:-} &
  bpid=$!
  pids+=("$bpid")
fi

nport=$(free_port)
cat > "$work/nginx.conf" <<CONF
daemon on; pid $work/nginx.pid; error_log $work/nginx-error.log; worker_processes 2;
worker_rlimit_nofile 30000;
events { worker_connections 12000; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  server { listen 127.0.0.1:$nport; root $work/www; } }
CONF
nginx -c "$work/nginx.conf"

servers=(mapgate nginx)
declare -A port=([mapgate]=$mport [nginx]=$nport [datasette]="" [baseline]=$bport)
declare -A prefix=([mapgate]="" [nginx]="" [datasette]="/-/tiles" [baseline]="")
[ -n "$bport" ] && servers=(mapgate baseline nginx)
if [ "${BENCH_DATASETTE:-0}" = 1 ]; then
  python3 -m venv "$work/venv" >/dev/null
  "$work/venv/bin/pip" install -q datasette datasette-tiles >/dev/null
  port[datasette]=$(free_port)
  (cd "$work" && exec "$work/venv/bin/datasette" serve bench.mbtiles --port "${port[datasette]}" >/dev/null 2>&1) &
  pids+=($!)
  servers+=(datasette)
fi
for _ in $(seq 50); do
  ok=1
  for name in "${servers[@]}"; do
    curl -sf -o /dev/null "http://127.0.0.1:${port[$name]}${prefix[$name]}/bench/0/0/0.png" || ok=0
  done
  [ "$ok" = 1 ] && break
  sleep 0.2
done

rss() { ps -o rss= -p "$mpid" | tr -d ' '; }
before=$(rss)
run() { # name file-suffix
  TILE_PREFIX=${prefix[$1]} wrk -t2 -c64 -d"${seconds}s" --latency -s "$work/paths.lua" "http://127.0.0.1:${port[$1]}" > "$work/wrk-$1-$2.txt"
}
summary() { # name file-suffix
  python3 - "$work/wrk-$1-$2.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", text)
ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(f"{rps:9.0f} req/s  p99 {ms:7.2f} ms  non-2xx {errors.group(1) if errors else 0}")
PY
}
for round in $(seq "$rounds"); do
  for name in "${servers[@]}"; do
    run "$name" "$round"
    echo "round $round  $(printf '%-9s' "$name") $(summary "$name" "$round")"
  done
  [ "$round" -eq 1 ] && warm=$(rss)
done
after=$(rss)

# IDLE_CONNECTIONS open in all: 64 of them wrk's, busy; the rest idle keep-alive connections
# that each made one request (what browsers leave open), held by loadgen.py for less than the
# 30 s idle timeout; interleaved rounds again. mapgate's RSS is read while they are held.
held_rss=0
baseline_held_rss=0
# The baseline too, when there is one (its RSS is read as mapgate's is).
idle_servers=(mapgate nginx)
[ -n "$bport" ] && idle_servers=(mapgate baseline nginx)
if [ "${BENCH_IDLE:-1}" != 0 ]; then
  held_seconds=$((seconds + 10))
  for round in $(seq "$rounds"); do
    for name in "${idle_servers[@]}"; do
      python3 bench/loadgen.py hold "${port[$name]}" $((idle - 64)) "$held_seconds" --request /bench/0/0/0.png > "$work/hold-$name-$round.txt" &
      holder=$!
      # Wait until all are open (loadgen prints its first line then), at most 8 s.
      for _ in $(seq 80); do grep -q "open" "$work/hold-$name-$round.txt" 2>/dev/null && break; sleep 0.1; done
      if [ "$name" = mapgate ]; then held_rss=$(( $(rss) > held_rss ? $(rss) : held_rss )); fi
      if [ "$name" = baseline ]; then b=$(ps -o rss= -p "$bpid" | tr -d ' '); baseline_held_rss=$(( b > baseline_held_rss ? b : baseline_held_rss )); fi
      run "$name" "idle-$round"
      echo "idle round $round  $(printf '%-7s' "$name") $(summary "$name" "idle-$round")  ($(head -1 "$work/hold-$name-$round.txt"))"
      wait "$holder"
      tail -1 "$work/hold-$name-$round.txt" | grep -v " 0 of " | sed "s/^/  $name /" || true
    done
  done
fi
echo "load after: $(uptime)"

python3 - "$work" "$rounds" "$before" "$warm" "$after" "$held_rss" "$idle" "${BENCH_IDLE:-1}" "$baseline_held_rss" "${servers[@]}" <<'PY'
import re, statistics, sys
work, rounds, before, warm, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
held_rss, idle, with_idle, baseline_held_rss, servers = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8] != "0", int(sys.argv[9]), sys.argv[10:]
def parse(name, suffix):
    text = open(f"{work}/wrk-{name}-{suffix}.txt").read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", text)
    ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return rps, ms, int(errors.group(1)) if errors else 0
def medians(prefix, names):
    res = {n: [parse(n, f"{prefix}{r}") for r in range(1, rounds + 1)] for n in names}
    return {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v), sum(x[2] for x in v), v) for n, v in res.items()}
med = medians("", servers)
print(f"\n64 connections, {rounds} rounds interleaved:")
for n, (rps, p99, errors, v) in med.items():
    rounds_text = " / ".join(f"{x[0]:.0f}" for x in v)
    print(f"  {n:9s} median {rps:8.0f} req/s  p99 {p99:7.2f} ms  non-2xx {errors}   (rounds: {rounds_text} req/s)")
m, n = med["mapgate"], med["nginx"]
print(f"  mapgate/nginx: req/s {m[0] / n[0]:.2f}x (goal >= 1.0), p99 {m[1] / n[1]:.2f}x (goal <= 1.0)")
per_round = [a[0] / b[0] for a, b in zip(m[3], n[3])]
print(f"  per-round req/s ratios: {' / '.join(f'{r:.2f}' for r in per_round)}")
if "datasette" in med:
    print(f"  mapgate/datasette-tiles req/s {m[0] / med['datasette'][0]:.1f}x")
if "baseline" in med:
    b = med["baseline"]
    print(f"  mapgate/baseline: req/s {m[0] / b[0]:.2f}x, p99 {m[1] / b[1]:.2f}x; per round {' / '.join(f'{x[0] / y[0]:.2f}' for x, y in zip(m[3], b[3]))}")
print(f"  mapgate RSS idle {before / 1024:.1f} MB, after round 1 {warm / 1024:.1f} MB, after round {rounds} {after / 1024:.1f} MB")
if with_idle:
    med = medians("idle-", [n for n in ("mapgate", "baseline", "nginx") if n in servers])
    print(f"{idle} connections open ({idle - 64} idle after one request each, 64 busy), {rounds} rounds interleaved:")
    for n, (rps, p99, errors, v) in med.items():
        rounds_text = " / ".join(f"{x[0]:.0f}" for x in v)
        print(f"  {n:9s} median {rps:8.0f} req/s  p99 {p99:7.2f} ms  non-2xx {errors}   (rounds: {rounds_text} req/s)")
    m, n = med["mapgate"], med["nginx"]
    print(f"  mapgate/nginx: req/s {m[0] / n[0]:.2f}x (goal >= 0.8), p99 {m[1] / n[1]:.2f}x")
    if "baseline" in med:
        b = med["baseline"]
        print(f"  mapgate/baseline: req/s {m[0] / b[0]:.2f}x; per round {' / '.join(f'{x[0] / y[0]:.2f}' for x, y in zip(m[3], b[3]))}")
        print(f"  baseline RSS with {idle - 64} idle connections held: {baseline_held_rss / 1024:.1f} MB")
    print(f"  mapgate RSS with {idle - 64} idle connections held: {held_rss / 1024:.1f} MB (limit 128 MB)")
PY
