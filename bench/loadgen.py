#!/usr/bin/env python3
"""Bounded load helpers for bench/serve.sh and bench/attack.sh. 127.0.0.1 only; every mode
stops by itself after SECONDS.

  loadgen.py hold PORT COUNT SECONDS [--request PATH]
      Opens COUNT connections and keeps them open, idle, for SECONDS (with --request, each
      first sends one request and reads its answer, so it idles as a keep-alive connection).
      Prints how many opened, and how many the server closed.
  loadgen.py latency PORT PATH COUNT
      One keep-alive client, COUNT sequential requests; prints p50/p99/max in ms and errors.
  loadgen.py attack PORT SECONDS [--never-read N] [--trickle N] [--pid PID] [--path PATH]
      Baseline latency of a normal client, then N clients that send pipelined requests and
      never read, and N that trickle a request head one byte a second, and the normal
      client's latency again; then how each bad client ended; with --pid, SIGTERM the server
      while under attack and time its exit.
"""
import os, resource, select, signal, socket, statistics, sys, time

HOST = "127.0.0.1"


def raise_nofile(count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, count + 256)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def read_response(sock, buf=b""):
    """Reads one response with Content-Length; returns (status, rest) or (None, b"")."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        rest += chunk
    return status, rest[length:]


def hold(port, count, seconds, request=None):
    limit = raise_nofile(count)
    socks, failed = [], 0
    deadline = time.monotonic() + seconds
    for i in range(min(count, limit - 64)):
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect((HOST, port))
            if request:
                s.sendall(f"GET {request} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
                read_response(s)
            s.setblocking(False)
            socks.append(s)
        except OSError:
            failed += 1
            s.close()
        if time.monotonic() > deadline:
            break
    print(f"hold: {len(socks)} open, {failed} failed", flush=True)
    closed = 0
    while time.monotonic() < deadline:
        time.sleep(0.5)
    for s in socks:
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print(f"hold: {closed} of {len(socks)} closed by the server while held", flush=True)


def latency(port, path, count):
    s = socket.create_connection((HOST, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times, errors, buf = [], 0, b""
    request = f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()
    for _ in range(count):
        started = time.perf_counter()
        try:
            s.sendall(request)
            status, buf = read_response(s, buf)
        except OSError:
            status = None
        times.append((time.perf_counter() - started) * 1000)
        if status != 200:
            errors += 1
            s.close()
            s = socket.create_connection((HOST, port), timeout=5)
            buf = b""
    s.close()
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.99) - 1], times[-1], errors


def attack(port, seconds, never_read, trickle, pid, path):
    raise_nofile(never_read + trickle + 64)
    p50, p99, worst, errors = latency(port, path, 3000)
    print(f"baseline: p50 {p50:.2f} ms  p99 {p99:.2f} ms  max {worst:.2f} ms  errors {errors}", flush=True)
    started = time.monotonic()
    stuck = []
    pipelined = (f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n" * 2000).encode()
    for _ in range(never_read):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((HOST, port))
        s.setblocking(False)
        try:
            s.send(pipelined)
        except BlockingIOError:
            pass
        stuck.append(s)
    slow = []
    head = f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nX-Slow: {'a' * 200}\r\n\r\n".encode()
    for _ in range(trickle):
        s = socket.create_connection((HOST, port))
        s.setblocking(False)
        slow.append([s, 0, None, None])  # socket, bytes sent, closed at, first answer line
    time.sleep(1)
    during = latency(port, path, 3000)
    print(f"under attack: p50 {during[0]:.2f} ms  p99 {during[1]:.2f} ms  max {during[2]:.2f} ms  errors {during[3]}"
          f"  (p99 ratio {during[1] / p99:.2f}, goal <= 2)", flush=True)
    if pid:
        os.kill(pid, signal.SIGTERM)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break  # exited; its parent has not reaped it yet
            except OSError:
                break
            time.sleep(0.01)
        print(f"SIGTERM under attack: exited after {time.monotonic() - t0:.2f} s (goal <= 2)", flush=True)
    last_tick = 0.0
    while time.monotonic() - started < seconds and any(c[2] is None for c in slow):
        now = time.monotonic()
        if now - last_tick >= 1:
            last_tick = now
            for c in slow:
                if c[2] is None and c[1] < len(head):
                    try:
                        c[0].send(head[c[1]:c[1] + 1])
                        c[1] += 1
                    except OSError:
                        pass
        for c in slow:
            if c[2] is not None:
                continue
            try:
                data = c[0].recv(4096)
                if data and c[3] is None:
                    c[3] = data.split(b"\r\n")[0].decode(errors="replace")
                if not data:
                    c[2] = time.monotonic() - started
            except BlockingIOError:
                pass
            except OSError:
                c[2] = time.monotonic() - started
        time.sleep(0.05)
    closed = [c[2] for c in slow if c[2] is not None]
    answers = {}
    for c in slow:
        answers[c[3]] = answers.get(c[3], 0) + 1
    if slow:
        print(f"tricklers: {len(closed)} of {len(slow)} closed by the server"
              + (f", after {min(closed):.1f}-{max(closed):.1f} s" if closed else "") + f"; answers {answers}", flush=True)
    if stuck and not pid and time.monotonic() - started + 1 < seconds:
        # The server closes a never-reader after 30 s without progress; its FIN waits behind
        # the answers the client never read, so ask the server how many connections it has.
        time.sleep(max(0.0, min(seconds, 33) - (time.monotonic() - started)))
        print(f"never-readers: {len(stuck)} still open on the client's side; the server has "
              f"{open_connections(port)} connections open {time.monotonic() - started:.0f} s after the attack began", flush=True)
    for s in stuck + [c[0] for c in slow]:
        s.close()


def open_connections(port):
    """mapgate_http_open_connections from /metrics (the probe's own connection included)."""
    try:
        s = socket.create_connection((HOST, port), timeout=5)
        s.sendall(f"GET /metrics HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        for line in data.decode(errors="replace").splitlines():
            if line.startswith("mapgate_http_open_connections "):
                return int(line.split()[1])
    except OSError:
        pass
    return "?"


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 64
    mode, port = argv[1], int(argv[2])
    if mode == "hold":
        request = argv[argv.index("--request") + 1] if "--request" in argv else None
        hold(port, int(argv[3]), min(float(argv[4]), 120), request)
    elif mode == "latency":
        p50, p99, worst, errors = latency(port, argv[3], min(int(argv[4]), 100000))
        print(f"p50 {p50:.2f} ms  p99 {p99:.2f} ms  max {worst:.2f} ms  errors {errors}")
    elif mode == "attack":
        def option(name, default):
            return type(default)(argv[argv.index(name) + 1]) if name in argv else default
        attack(port, min(float(argv[3]), 120), min(option("--never-read", 50), 1000), min(option("--trickle", 500), 2000),
               option("--pid", 0), option("--path", "/bench/0/0/0.png"))
    else:
        print(__doc__)
        return 64
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
