#!/usr/bin/env bash
# Which HTTP library: the smallest server of each (bench/http-libs/*.c: a fixed 7,000-byte body,
# two event-loop threads), libmicrohttpd set up as mapgate's is, and h2o (libh2o-evloop), with
# wrk on loopback: 64 connections, then 64 busy among 10,000 open (9,936 idle keep-alive
# connections held by bench/loadgen.py, each after one request, as bench/serve.sh holds them).
# Prints each server's RSS before the idle connections and while they are held, and the
# resident bytes an idle connection costs. Bounded; 127.0.0.1 only.
# Usage: bench/http-libs.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
rounds=${2:-3}
ulimit -n "$(ulimit -Hn)"
need=()
for package in libmicrohttpd-dev libh2o-evloop-dev wrk; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || need+=("$package")
done
if ((${#need[@]})); then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; fi
work=$(mktemp -d /tmp/mapgate-http-libs.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cc -O2 -o "$work/mhd" bench/http-libs/mhd-fixed.c $(pkg-config --cflags --libs libmicrohttpd)
cc -O2 -DH2O_USE_LIBUV=0 -o "$work/h2o" bench/http-libs/h2o-fixed.c $(pkg-config --cflags --libs libh2o-evloop) -lpthread
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mport=$(free_port); "$work/mhd" "$mport" 2 & pids+=($!)
hport=$(free_port); "$work/h2o" "$hport" 2 & pids+=($!)
sleep 1
report() { echo "$1 $(grep Requests/sec "$2" | awk '{print $2}') req/s  p99 $(grep ' 99%' "$2" | awk '{print $2}')  $(grep -i -E 'non-2xx|socket errors' "$2" | tr -s ' ')"; }
for round in $(seq "$rounds"); do
  for name in libmicrohttpd h2o; do
    port=$mport; [ "$name" = h2o ] && port=$hport
    wrk -t2 -c64 -d"${seconds}s" --latency "http://127.0.0.1:$port/" > "$work/$name-$round.txt"
    report "$name 64 connections:" "$work/$name-$round.txt"
  done
done
for name in libmicrohttpd h2o; do
  port=$mport; [ "$name" = h2o ] && port=$hport
  pid=${pids[0]}; [ "$name" = h2o ] && pid=${pids[1]}
  before=$(ps -o rss= -p "$pid" | tr -d ' ')
  python3 bench/loadgen.py hold "$port" 9936 $((seconds + 12)) --request / > "$work/hold-$name.txt" &
  holder=$!
  sleep 8
  wrk -t2 -c64 -d"${seconds}s" --latency "http://127.0.0.1:$port/" > "$work/$name-idle.txt"
  held=$(ps -o rss= -p "$pid" | tr -d ' ')
  wait "$holder"
  report "$name 64 busy of 10,000 open:" "$work/$name-idle.txt"
  echo "$name RSS ${before} kB before, ${held} kB with the idle connections held: $(((held - before) * 1024 / 9936)) bytes each; $(tail -1 "$work/hold-$name.txt")"
done
