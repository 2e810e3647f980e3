#!/usr/bin/env python3
"""Loads a page in headless Chromium and prints its DOM once it holds a text, in real time.

usage: dom-when.py CHROMIUM URL SECONDS [TEXT] [-- CHROMIUM-FLAGS...]

`--dump-dom` with `--virtual-time-budget` (what the other browser tests use) counts the page's
own time, which races ahead while MapLibre's web workers fetch and parse (their work is not
counted): on a busy machine the budget ran out before the map had loaded (issue 43). This drives
Chromium over the DevTools protocol on a pipe (`--remote-debugging-pipe`: fds 3 and 4, messages
ended by NUL, no socket and no other module), opens URL and asks for the DOM every quarter second
until it contains TEXT (without TEXT: until the document is complete) or SECONDS of real time
have passed. Prints the last DOM; exits 0 when TEXT was found, 1 when the time ran out, 2 when
Chromium could not be driven. What the page wrote to its console goes to stderr.
"""
import ctypes
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time

args = sys.argv[1:]
extra = []
if "--" in args:
    extra = args[args.index("--") + 1:]
    args = args[:args.index("--")]
chromium, url, seconds = args[0], args[1], float(args[2])
wanted = args[3] if len(args) > 3 else None

to_chromium_read, to_chromium = os.pipe()
from_chromium, from_chromium_write = os.pipe()


def give_fds():
    # In the child: killed with this script (PR_SET_PDEATHSIG), so that a test run that kills a
    # hung script leaves no browser behind; the pipe ends become fds 3 and 4 (by way of high
    # numbers, as either may be 3 or 4 already); subprocess keeps them open (pass_fds).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    reading = fcntl.fcntl(to_chromium_read, fcntl.F_DUPFD, 64)
    writing = fcntl.fcntl(from_chromium_write, fcntl.F_DUPFD, 64)
    os.dup2(reading, 3)
    os.dup2(writing, 4)


browser = subprocess.Popen(
    [chromium, "--headless", "--no-sandbox", "--remote-debugging-pipe", *extra, "about:blank"],
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    preexec_fn=give_fds, pass_fds=(3, 4))
os.close(to_chromium_read)
os.close(from_chromium_write)
pending = b""
next_id = 0


def send(method, params=None, session=None):
    global next_id
    next_id += 1
    message = {"id": next_id, "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    os.write(to_chromium, json.dumps(message).encode() + b"\0")
    return next_id


def receive():
    """The next message from Chromium (events included); a browser silent for 30 s is hung."""
    global pending
    while b"\0" not in pending:
        if not select.select([from_chromium], [], [], 30)[0]:
            raise RuntimeError("Chromium said nothing for 30 s")
        chunk = os.read(from_chromium, 1 << 16)
        if not chunk:
            raise EOFError("Chromium closed its pipe")
        pending += chunk
    message, pending = pending.split(b"\0", 1)
    return json.loads(message)


def call(method, params=None, session=None):
    """Sends a command and returns its result; console messages met on the way go to stderr."""
    number = send(method, params, session)
    while True:
        message = receive()
        if message.get("method") == "Runtime.consoleAPICalled":
            texts = [str(a.get("value", a.get("description", ""))) for a in message["params"].get("args", [])]
            print("console." + message["params"].get("type", "log") + ": " + " ".join(texts), file=sys.stderr)
        elif message.get("method") == "Runtime.exceptionThrown":
            details = message["params"].get("exceptionDetails", {})
            print("exception: " + str(details.get("exception", {}).get("description", details.get("text"))), file=sys.stderr)
        if message.get("id") == number:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message.get("result", {})


status = 2
dom = ""
try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    call("Runtime.enable", session=session)
    call("Page.navigate", {"url": url}, session=session)
    deadline = time.monotonic() + seconds
    status = 1
    while True:
        result = call("Runtime.evaluate", {
            "expression": "[document.readyState, document.documentElement.outerHTML]", "returnByValue": True}, session=session)
        state, dom = result.get("result", {}).get("value", ["", ""])
        if (wanted is not None and wanted in dom) or (wanted is None and state == "complete"):
            status = 0
            break
        if time.monotonic() >= deadline:
            break
        time.sleep(0.25)
    call("Browser.close")
except (EOFError, RuntimeError, OSError, KeyError) as error:
    print(f"dom-when: {error}", file=sys.stderr)
finally:
    try:
        browser.wait(timeout=10 if status != 2 else 0.1)
    except subprocess.TimeoutExpired:
        browser.kill()
        browser.wait()
print(dom)
sys.exit(status)
