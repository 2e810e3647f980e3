#!/usr/bin/env python3
"""Makes a raster region of many small tiles for the serving benchmark.

usage: make-tiles.py OUT_DIR [ZOOM] [PATHS_MINZOOM]
Writes OUT_DIR/bench.mbtiles (every tile of zoom 0..ZOOM; ZOOM 7 gives 21,845 tiles), the same
tiles as static files OUT_DIR/www/bench/Z/X/Y.png for nginx, and OUT_DIR/paths.lua, the list of
tile paths wrk picks from at random (those of zoom PATHS_MINZOOM..ZOOM; 0 by default).
"""
import os, random, sqlite3, sys

out = sys.argv[1]
maxzoom = int(sys.argv[2]) if len(sys.argv) > 2 else 7
paths_minzoom = int(sys.argv[3]) if len(sys.argv) > 3 else 0
os.makedirs(out, exist_ok=True)
path = os.path.join(out, "bench.mbtiles")
if os.path.exists(path):
    os.remove(path)
db = sqlite3.connect(path)
db.executescript("""
    PRAGMA journal_mode=OFF;
    CREATE TABLE metadata (name TEXT, value TEXT);
    CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
    CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
""")
db.executemany("INSERT INTO metadata VALUES (?, ?)",
               [("name", "bench"), ("format", "png"), ("minzoom", "0"), ("maxzoom", str(maxzoom)), ("bounds", "-180,-85,180,85")])
rng = random.Random(7)
paths = []
for z in range(maxzoom + 1):
    for x in range(2 ** z):
        for y in range(2 ** z):
            body = b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(500, 6000))
            db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (z, x, 2 ** z - 1 - y, body))
            folder = os.path.join(out, "www", "bench", str(z), str(x))
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"{y}.png"), "wb") as f:
                f.write(body)
            if z >= paths_minzoom:
                paths.append(f"/bench/{z}/{x}/{y}.png")
db.commit()
db.close()
with open(os.path.join(out, "paths.lua"), "w") as f:
    f.write("paths = {\n" + ",\n".join(f'"{p}"' for p in paths) + "\n}\n")
    f.write("""
prefix = os.getenv("TILE_PREFIX") or ""
math.randomseed(42)
request = function()
  return wrk.format("GET", prefix .. paths[math.random(#paths)])
end
""")
print(f"{len(paths)} tile paths")
