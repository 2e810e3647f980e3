#!/usr/bin/env python3
"""Random kills of `mapgate sync` (issue 40's method, rerun): a measurement, not a test.

A region (a real MBTiles file from ../shared/fixtures, made barely compressible so a sync takes
long enough to be cut anywhere) is published with `mapgate publish` and served by python's
http.server on 127.0.0.1; the gate prompts (store at 1.5.0 since 2027-01-01, runs at 2027-02-05,
a signed test policy allowing 500 prompted uses). Each round publishes a new version (so every
sync has work: a delta or the full package), starts `mapgate sync`, and SIGKILLs it after a random
delay within the time a whole sync takes. After each kill it checks:
  bytes lost      the installed file is neither the version before nor the one published;
  wrongly charged a prompted use was counted while the installed file did not change;
  misread         `verify` fails for the file that is there;
and at the end, after one sync that runs to completion, what killed runs left behind (orphans).

Usage: bench/random-kill.py [ROUNDS] (default 60). Needs the debug build (swift build): only it
reads the test policy key. Prints one line per round and a summary.
"""
import hashlib, http.server, json, os, random, shutil, signal, socketserver, sqlite3, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
BINARY = os.environ.get("MAPGATE_BINARY") or subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True).stdout.strip() + "/mapgate"
FIXTURE = os.path.join(ROOT, "..", "shared", "fixtures", "mbtiles", "node-mbtiles-plain_1.mbtiles")

work = tempfile.mkdtemp(prefix="mapgate-kill-")
os.chmod(work, 0o755)
www, inbox, data, state = (os.path.join(work, name) for name in ("www", "in", "data", "state"))
for folder in (www, inbox):
    os.makedirs(folder)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=www, **kwargs)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a killed client's broken pipe


server = Server(("127.0.0.1", 0), Quiet)
threading.Thread(target=server.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{server.server_address[1]}"

subprocess.run(["minisign", "-G", "-W", "-f", "-p", f"{work}/pub", "-s", f"{work}/key"], check=True, capture_output=True)
public_key = open(f"{work}/pub").read().splitlines()[1]
json.dump({"resultCount": 1, "results": [{"version": "1.5.0", "trackId": 1, "trackViewUrl": "https://apps.example/m"}]}, open(f"{www}/lookup.json", "w"))
policy = {"appID": 1, "lookupURL": f"{base}/lookup.json", "allowInsecureLookup": True, "maxPrompts": 100, "trustedKeys": [public_key]}
json.dump(policy, open(f"{work}/policy.json", "w"))
subprocess.run(["minisign", "-S", "-s", os.path.join(ROOT, "Fixtures/keys/test-policy.key"), "-m", f"{work}/policy.json"], check=True, capture_output=True, input=b"\n")
json.dump({"catalogURL": f"{base}/catalog.json"}, open(f"{work}/config.json", "w"))
env = dict(os.environ, MAPGATE_POLICY=f"{work}/policy.json", MAPGATE_CONFIG=f"{work}/config.json", MAPGATE_DATA_DIR=data,
           XDG_STATE_HOME=state, NO_COLOR="1", TZ="UTC", DONT_FAKE_MONOTONIC="1", LANG="C.UTF-8")


def mapgate(*arguments, at="2027-02-05 00:00:00"):
    return subprocess.run(["faketime", at, BINARY, *arguments], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def publish(version):
    """Version `version`: the fixture with 20 % of its tiles replaced by noise (a new file each time)."""
    path = f"{inbox}/plain.mbtiles"
    if os.path.exists(path):
        os.remove(path)
    with sqlite3.connect(path) as db:
        # A flat copy (the fixture's `tiles` is a view over map and images).
        db.execute("ATTACH ? AS source", (FIXTURE,))
        db.execute("CREATE TABLE metadata AS SELECT name, value FROM source.metadata")
        db.execute("CREATE TABLE tiles AS SELECT zoom_level, tile_column, tile_row, tile_data FROM source.tiles")
        db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
        db.commit()
        db.execute("DETACH source")
        rows = db.execute("SELECT zoom_level, tile_column, tile_row FROM tiles").fetchall()
        rng = random.Random(version)
        for z, x, y in rng.sample(rows, len(rows) // 5):
            noise = bytes(rng.getrandbits(8) for _ in range(20000))
            # Still a PNG to the format sniffing: the signature, then noise.
            db.execute("UPDATE tiles SET tile_data = ? WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                       (b"\x89PNG\r\n\x1a\n" + noise, z, x, y))
        # (The copied table has no unique index on name: the old row goes first, or publish
        # refuses a name given twice.)
        db.execute("DELETE FROM metadata WHERE name = 'description'")
        db.execute("INSERT INTO metadata VALUES ('description', ?)", (f"v{version}",))
    json.dump({"plain.mbtiles": {"version": str(version)}}, open(f"{inbox}/regions.json", "w"))
    result = mapgate("publish", inbox, "--out", www, "--key", f"{work}/key", "--keep", "3")
    if result.returncode != 0:
        sys.exit(f"publish {version}: {result.stderr}")
    return tiles_hash(path)


def tiles_hash(path):
    """The SHA-256 of the file's tiles and metadata in key order: a delta's result has the
    published version's rows in other bytes than the published file."""
    digest = hashlib.sha256()
    try:
        with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as db:
            for row in db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY 1, 2, 3"):
                digest.update(repr(row).encode())
            for row in db.execute(
                "SELECT name, value FROM metadata WHERE name NOT LIKE 'agg_tiles_hash%' AND name NOT LIKE 'mapgate_%' ORDER BY 1, 2"):
                digest.update(repr(row).encode())
    except sqlite3.Error as error:
        return f"unreadable: {error}"
    return digest.hexdigest()


def installed_hash():
    path = f"{data}/regions/plain.mbtiles"
    return tiles_hash(path) if os.path.exists(path) else None


def prompts():
    out = mapgate("status", "--json").stdout
    return json.loads(out.splitlines()[0])["promptsShown"]


hashes = {1: publish(1)}
first = mapgate("sync", "plain", at="2027-01-01 00:00:00")
if first.returncode != 0:
    sys.exit(f"first sync: {first.stderr}")
version = 2
hashes[version] = publish(version)
start = time.monotonic()
probe = mapgate("sync", "plain")
whole = time.monotonic() - start
if probe.returncode != 0:
    sys.exit(f"probe sync: {probe.stderr}")

lost = wrongly = misread = killed_during = 0
for round in range(1, ROUNDS + 1):
    version += 1
    hashes[version] = publish(version)
    before_hash, before_prompts = installed_hash(), prompts()
    # Up to twice a whole sync's time: a loaded machine's syncs take longer than the probe's.
    delay = random.uniform(0, whole * 2)
    process = subprocess.Popen(["faketime", "2027-02-05 00:00:00", BINARY, "sync", "plain"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
    time.sleep(delay)
    ended_alone = process.poll() is not None
    if not ended_alone:
        os.killpg(process.pid, signal.SIGKILL)
        killed_during += 1
    process.wait()
    after_hash, after_prompts = installed_hash(), prompts()
    good = {hashes[version], hashes[version - 1], before_hash}
    bytes_lost = after_hash not in good
    charged = after_prompts - before_prompts
    wrong = charged > 0 and after_hash == before_hash
    verify = mapgate("verify", "plain")
    bad_verify = verify.returncode != 0
    lost += bytes_lost
    wrongly += wrong
    misread += bad_verify
    state_word = "new" if after_hash == hashes[version] else ("old" if after_hash == before_hash else "OTHER")
    print(f"round {round:3d}: killed at {delay:.3f}s{' (had ended)' if ended_alone else ''}: file {state_word}, "
          f"uses charged {charged}{' WRONGLY' if wrong else ''}{', verify FAILED: ' + verify.stderr.strip() if bad_verify else ''}")

final = mapgate("sync", "plain")
leftovers = []
for folder, _, names in os.walk(data):
    for name in names:
        if name.endswith((".tmp", ".part", ".json.part", ".pending.json")) or ".nosync" in name or "installing" in name or "patching" in name:
            leftovers.append(os.path.relpath(os.path.join(folder, name), data))
print(f"\n{ROUNDS} rounds ({killed_during} killed while running; a whole sync took {whole:.2f}s): "
      f"bytes lost {lost}, uses wrongly charged {wrongly}, verify failures {misread}, "
      f"orphans after the next sync {len(leftovers)}{' ' + str(leftovers) if leftovers else ''} (final sync exit {final.returncode})")
server.shutdown()
shutil.rmtree(work, ignore_errors=True)
