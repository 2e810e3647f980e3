#!/usr/bin/env python3
"""Writes the demo's map data: Fixtures/regions/*.mbtiles.gz and Fixtures/catalog.json.

After running it, sign the catalog with the demo key (the demo trusts Fixtures/keys/demo.pub):
    minisign -S -s Fixtures/keys/demo.key -m Fixtures/catalog.json -t "mapgate demo catalog"


The files are committed; run this again only to change them (python3, standard library only).
Each tile is a 256x256 PNG with a colour for its zoom level, a dark border and a cross, so a
screenshot of the viewer shows tiles that a test can recognise by their pixels.
"""
import gzip, hashlib, json, os, sqlite3, struct, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
COLOURS = [(46, 134, 193), (40, 180, 99), (241, 196, 15), (230, 126, 34), (192, 57, 43)]


def png(width, height, pixel):
    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def tile(z, x, y):
    base = COLOURS[z % len(COLOURS)]
    shade = 0.85 if (x + y) % 2 else 1.0
    fill = tuple(int(c * shade) for c in base)
    def pixel(px, py):
        if px < 4 or py < 4 or px > 251 or py > 251:
            return (20, 20, 20)
        if abs(px - 128) < 3 or abs(py - 128) < 3:
            return (250, 250, 250)
        return fill
    return png(256, 256, pixel)


def mbtiles(path, name, maxzoom, bounds):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE metadata (name TEXT, value TEXT);
        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
        CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
    """)
    meta = {"name": name, "format": "png", "minzoom": "0", "maxzoom": str(maxzoom), "type": "baselayer",
            "version": "1", "description": "mapgate demo region", "attribution": "mapgate demo data",
            "bounds": ",".join(str(b) for b in bounds)}
    db.executemany("INSERT INTO metadata VALUES (?, ?)", meta.items())
    for z in range(maxzoom + 1):
        for x in range(2 ** z):
            for y in range(2 ** z):
                db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (z, x, 2 ** z - 1 - y, tile(z, x, y)))
    db.commit()
    db.execute("VACUUM")
    db.close()


def main():
    regions = [("demo-world", "Demo World", 3, [-180, -85, 180, 85], "2026.11")]
    entries = []
    for rid, name, maxzoom, bounds, version in regions:
        raw = os.path.join(HERE, "regions", rid + ".mbtiles")
        mbtiles(raw, name, maxzoom, bounds)
        data = open(raw, "rb").read()
        package = raw + ".gz"
        with open(package, "wb") as out:
            out.write(gzip.compress(data, 9, mtime=0))
        packed = open(package, "rb").read()
        os.remove(raw)
        entries.append({"id": rid, "name": name, "version": version, "url": "regions/" + rid + ".mbtiles.gz",
                        "size": len(packed), "sha256": hashlib.sha256(packed).hexdigest(), "installedSize": len(data),
                        "format": "png", "bounds": bounds, "minzoom": 0, "maxzoom": maxzoom})
    catalog = {"formatVersion": 1, "publisher": "mapgate demo", "generated": "2026-11-30T00:00:00Z",
               "serial": 1, "expires": "2036-01-01T00:00:00Z", "regions": entries}
    with open(os.path.join(HERE, "catalog.json"), "w") as out:
        json.dump(catalog, out, indent=2)
        out.write("\n")


if __name__ == "__main__":
    main()
