#!/usr/bin/env python3
"""Makes a large MBTiles region and its gzip package for the download benchmark.

usage: make-package.py OUT_DIR MEGABYTES
Tiles are PNG-signed blobs of pseudo-random bytes (barely compressible, like real imagery), so
the gzip package is about as large as the MBTiles file. Writes OUT_DIR/big.mbtiles.gz and
OUT_DIR/catalog.json, which names the tiles' contentHash (martin's agg_tiles_hash) as every
catalog `mapgate publish` writes does.
"""
import gzip, hashlib, json, os, random, sqlite3, sys

out, megabytes = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
raw = os.path.join(out, "big.mbtiles")
if os.path.exists(raw):
    os.remove(raw)
db = sqlite3.connect(raw)
db.executescript("""
    PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
    CREATE TABLE metadata (name TEXT, value TEXT);
    CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
    CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
""")
db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "Benchmark"), ("format", "png"), ("minzoom", "0"), ("maxzoom", "8")])
rng = random.Random(42)
tile_size = 24 * 1024
count = megabytes * 1024 * 1024 // tile_size
written = 0
tiles_md5 = hashlib.md5()  # agg_tiles_hash: z, x, y as text then the bytes, in key order (as written)
for z in range(9):
    for x in range(2 ** z):
        for y in range(2 ** z):
            if written >= count:
                break
            body = b"\x89PNG\r\n\x1a\n" + rng.randbytes(tile_size - 8)
            db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (z, x, y, body))
            tiles_md5.update(f"{z}{x}{y}".encode() + body)
            written += 1
db.commit()
db.close()
package = raw + ".gz"
with open(raw, "rb") as source, gzip.open(package, "wb", compresslevel=6) as target:
    while chunk := source.read(1 << 20):
        target.write(chunk)
digest = hashlib.sha256()
with open(package, "rb") as f:
    while chunk := f.read(1 << 20):
        digest.update(chunk)
entry = {"id": "big", "name": "Benchmark", "version": "1", "url": "big.mbtiles.gz", "size": os.path.getsize(package),
         "sha256": digest.hexdigest(), "installedSize": os.path.getsize(raw), "format": "png", "minzoom": 0, "maxzoom": 8,
         "contentHash": tiles_md5.hexdigest().upper()}
with open(os.path.join(out, "catalog.json"), "w") as f:
    json.dump({"formatVersion": 1, "publisher": "bench", "regions": [entry]}, f)
os.remove(raw)
print(f"{written} tiles, package {entry['size'] / 1e6:.1f} MB, installed {entry['installedSize'] / 1e6:.1f} MB")
