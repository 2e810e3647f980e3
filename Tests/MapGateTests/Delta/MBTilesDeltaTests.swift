import Foundation
import MapGate
import TestSupport
import Testing

extension DeltaTests {
    @Suite struct MBTilesDeltaTests {
        typealias Files = DeltaTestFiles

        // MARK: - martin's format

        /// `make` of martin's v1 and v2 gives exactly the diff martin's `mbtiles diff` records.
        @Test(arguments: [(Files.Layout.martinFlat, Files.Layout.martinFlat), (.normalized, .flat), (.flat, .martinNormalized)])
        func reproducesMartinsDiff(baseLayout: Files.Layout, targetLayout: Files.Layout) throws {
            let directory = try TemporaryDirectory()
            let v1 = directory.file("v1.mbtiles")
            let v2 = directory.file("v2.mbtiles")
            try Files.write(v1, layout: baseLayout, tiles: MartinSnapshots.v1Tiles, metadata: MartinSnapshots.v1Metadata)
            try Files.write(v2, layout: targetLayout, tiles: MartinSnapshots.v2Tiles, metadata: MartinSnapshots.v2Metadata)
            let delta = directory.file("dif.mbtiles")
            let summary = try MBTilesDelta.make(from: v1, to: v2, output: delta)

            #expect(try Files.tiles(of: delta) == MartinSnapshots.difTiles)
            // martin's rows, and mapgate's one key beside them (which martin ignores).
            var metadata = try Files.metadata(of: delta)
            let change = metadata.removeValue(forKey: MBTilesDelta.ltHashChangeKey)
            #expect(metadata == MartinSnapshots.difMetadata)
            #expect(change??.count == 64)
            #expect(
                summary == DeltaSummary(
                    baseHash: MartinSnapshots.v1Hash, targetHash: MartinSnapshots.v2Hash, tilesWritten: 6, tilesRemoved: 3,
                    metadataWritten: 2, metadataRemoved: 1))
            // martin's flat schema: a tiles table keyed by the coordinates, a metadata table keyed by name.
            let database = try SQLiteDatabase(path: delta, mode: .readOnly)
            let schema = try database.query("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name") {
                "\($0.text(0) ?? "") \($0.text(1) ?? "")"
            }
            #expect(schema == ["metadata table", "tiles table"])
        }

        /// A diff as martin writes it (flat, or normalized with its '' / NULL removal rows) applies to
        /// v1 in either layout and gives v2, metadata and stored hash included.
        @Test(arguments: [
            (Files.Layout.martinFlat, Files.Layout.flat), (.martinFlat, .normalized), (.martinNormalized, .martinFlat),
            (.martinNormalized, .normalized), (.martinFlat, .martinFlatWithHash),
        ])
        func appliesMartinsDiff(deltaLayout: Files.Layout, baseLayout: Files.Layout) throws {
            let directory = try TemporaryDirectory()
            let base = directory.file("v1.mbtiles")
            let delta = directory.file("dif.mbtiles")
            try Files.write(base, layout: baseLayout, tiles: MartinSnapshots.v1Tiles, metadata: MartinSnapshots.v1Metadata)
            try Files.write(delta, layout: deltaLayout, tiles: MartinSnapshots.difTiles, metadata: MartinSnapshots.difMetadata)

            let summary = try MBTilesDelta.apply(delta: delta, to: base)

            #expect(try Files.tiles(of: base) == MartinSnapshots.v2Tiles)
            #expect(try Files.metadata(of: base) == MartinSnapshots.v2Metadata)
            #expect(summary.tilesWritten == 6 && summary.tilesRemoved == 3)
            #expect(summary.metadataWritten == 2 && summary.metadataRemoved == 1)
            #expect(try TilesetHash.compute(ofFileAt: base).hex == MartinSnapshots.v2Hash)
            if baseLayout == .normalized { try Self.expectNoOrphanImages(base) }
        }

        /// Into martin's flat-with-hash layout, each new tile gets the MD5 martin's own snapshot
        /// records for it (`copy__databases@hash__v2.snap`).
        /// Applied to a scratch copy (`flushesOnCommit: false`, as `sync` does), no rollback
        /// journal is written (found by an attack: on a nearly full disk the journal's pages made
        /// the apply fail where the space check said it fit). A dangling link standing where the
        /// journal would be made shows it: the default apply cannot make the journal through it, the
        /// scratch apply needs none.
        @Test func aScratchApplyWritesNoJournal() throws {
            let directory = try TemporaryDirectory()
            let base = directory.file("v1.mbtiles")
            let delta = directory.file("dif.mbtiles")
            try Files.write(base, layout: .martinFlat, tiles: MartinSnapshots.v1Tiles, metadata: MartinSnapshots.v1Metadata)
            try Files.write(delta, layout: .martinFlat, tiles: MartinSnapshots.difTiles, metadata: MartinSnapshots.difMetadata)
            try FileManager.default.createSymbolicLink(atPath: base + "-journal", withDestinationPath: directory.file("no-such-folder/journal"))
            #expect(throws: (any Error).self) { try MBTilesDelta.apply(delta: delta, to: base) }
            let summary = try MBTilesDelta.apply(delta: delta, to: base, hashes: .byCaller, flushesOnCommit: false)
            #expect(try TilesetHash.compute(ofFileAt: base).hex == summary.targetHash)
            #expect(try Files.tiles(of: base) == MartinSnapshots.v2Tiles)
        }

        @Test func flatWithHashBaseGetsMartinsTileHashes() throws {
            let directory = try TemporaryDirectory()
            let base = directory.file("v1.mbtiles")
            let delta = directory.file("dif.mbtiles")
            try Files.write(base, layout: .martinFlatWithHash, tiles: MartinSnapshots.v1Tiles, metadata: MartinSnapshots.v1Metadata)
            try Files.write(delta, layout: .martinFlat, tiles: MartinSnapshots.difTiles, metadata: MartinSnapshots.difMetadata)

            try MBTilesDelta.apply(delta: delta, to: base)

            let database = try SQLiteDatabase(path: base, mode: .readOnly)
            let hashes = try database.query(
                "SELECT zoom_level, tile_column, tile_row, tile_hash FROM tiles_with_hash WHERE zoom_level >= 5 AND tile_column >= 1"
            ) { (TileKey($0.int(0), $0.int(1), $0.int(2)), $0.text(3) ?? "") }
            #expect(
                Dictionary(uniqueKeysWithValues: hashes) == [
                    TileKey(5, 1, 1): "FF76830FF90D79BB335884F256031731", TileKey(5, 1, 2): "99DEE0E66806ECF1C20C09F64B2C0A34",
                    TileKey(5, 1, 3): "D41D8CD98F00B204E9800998ECF8427E", TileKey(5, 3, 7): "22AF645D1859CB5CA6DA0C484F1F37EA",
                    TileKey(5, 3, 8): "22AF645D1859CB5CA6DA0C484F1F37EA", TileKey(6, 1, 4): "03132BFACDB00CC63D6B7DD98D974DD5",
                ])
            #expect(try Files.tiles(of: base) == MartinSnapshots.v2Tiles)
        }

        // MARK: - Round trips

        @Test(arguments: [(Files.Layout.flat, Files.Layout.flat, true), (.flat, .flat, false), (.normalized, .flat, true), (.flat, .normalized, false), (.normalized, .normalized, true)])
        func makeThenApplyGivesTheTarget(baseLayout: Files.Layout, targetLayout: Files.Layout, png: Bool) throws {
            let directory = try TemporaryDirectory()
            let baseTiles = Files.pyramid(maxZoom: 4, png: png, seed: 3)
            let targetTiles = Self.edited(baseTiles, png: png, seed: 4)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, layout: baseLayout, tiles: baseTiles, metadata: Self.baseMetadata)
            try Files.write(target, layout: targetLayout, tiles: targetTiles, metadata: Self.targetMetadata)
            let delta = directory.file("delta.mbtiles")

            let made = try MBTilesDelta.make(from: base, to: target, output: delta)
            let copy = try Files.copy(base, to: directory, as: "copy.mbtiles")
            let applied = try MBTilesDelta.apply(delta: delta, to: copy)

            let result = try Files.tiles(of: copy)
            #expect(result.count == targetTiles.count)
            #expect(result == targetTiles, "tiles differ from the target's")
            #expect(try Files.metadataWithoutHashes(of: copy) == Files.metadataWithoutHashes(of: target))
            let targetHash = try TilesetHash.compute(ofFileAt: target).hex
            #expect(try Files.metadata(of: copy)[MBTilesDelta.hashKey] == .some(targetHash))
            #expect(made == applied)
            #expect(made.targetHash == targetHash)
            #expect(made.tilesRemoved == 20 && made.tilesWritten == 40 + 64)
            #expect(made.metadataWritten == 2 && made.metadataRemoved == 1)
            // The delta holds only the differences.
            #expect(try Files.tiles(of: delta).count == 20 + 40 + 64)
            // A de-duplicated base stays de-duplicated, with no image left that no tile uses.
            let database = try SQLiteDatabase(path: copy, mode: .readOnly)
            let tilesType = try database.query("SELECT type FROM sqlite_master WHERE name = 'tiles'") { $0.text(0) ?? "" }
            #expect(tilesType == [baseLayout == .flat ? "table" : "view"])
            if baseLayout == .normalized { try Self.expectNoOrphanImages(copy) }
        }

        @Test func identicalFilesGiveAnEmptyDelta() throws {
            let directory = try TemporaryDirectory()
            let tiles = Files.pyramid(maxZoom: 3, png: true, seed: 5)
            let base = directory.file("base.mbtiles")
            let same = directory.file("same.mbtiles")
            try Files.write(base, layout: .flat, tiles: tiles, metadata: Self.baseMetadata)
            // The same tiles in the other layout are the same tileset.
            try Files.write(same, layout: .normalized, tiles: tiles, metadata: Self.baseMetadata)
            let delta = directory.file("delta.mbtiles")

            let summary = try MBTilesDelta.make(from: base, to: same, output: delta)

            #expect(summary.isEmpty)
            #expect(summary.baseHash == summary.targetHash)
            #expect(try Files.tiles(of: delta).isEmpty)
            let hash = try TilesetHash.compute(ofFileAt: base).hex
            #expect(
                try Files.metadata(of: delta) == [
                    MBTilesDelta.hashKey: TilesetHash.emptyHex, MBTilesDelta.beforeApplyKey: hash, MBTilesDelta.afterApplyKey: hash,
                    MBTilesDelta.ltHashChangeKey: try TilesLtHash().digest,
                ])
            try MBTilesDelta.apply(delta: delta, to: base)
            #expect(try Files.tiles(of: base) == tiles)
        }

        // MARK: - Refusals

        @Test func wrongBaseFailsBeforeChangingAnything() throws {
            let directory = try TemporaryDirectory()
            let baseTiles = Files.pyramid(maxZoom: 3, png: true, seed: 6)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            let other = directory.file("other.mbtiles")
            try Files.write(base, tiles: baseTiles, metadata: Self.baseMetadata)
            try Files.write(target, tiles: Self.edited(baseTiles, png: true, seed: 7), metadata: Self.targetMetadata)
            try Files.write(other, layout: .normalized, tiles: Self.edited(baseTiles, png: true, seed: 8), metadata: Self.baseMetadata)
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: base, to: target, output: delta)
            let before = try Files.fingerprint(other)

            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: other) }

            let expected = try TilesetHash.compute(ofFileAt: base).hex
            let actual = try TilesetHash.compute(ofFileAt: other).hex
            #expect(error == DeltaError(path: delta, reason: .baseMismatch(expected: expected, actual: actual)))
            #expect(error?.kind == .badData)
            #expect(error?.localizedDescription.contains("it expects a base whose agg_tiles_hash is \(expected), and the base's is \(actual)") == true)
            #expect(try Files.fingerprint(other) == before, "the wrong base was changed")
        }

        @Test func tamperedDeltaFailsTheResultCheckAndChangesNothing() throws {
            let directory = try TemporaryDirectory()
            let baseTiles = Files.pyramid(maxZoom: 3, png: false, seed: 9)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, layout: .normalized, tiles: baseTiles, metadata: Self.baseMetadata)
            try Files.write(target, tiles: Self.edited(baseTiles, png: false, seed: 10), metadata: Self.targetMetadata)
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: base, to: target, output: delta)
            let tampering = try SQLiteDatabase(path: delta, mode: .readWriteCreate)
            try tampering.execute(
                """
                UPDATE tiles SET tile_data = X'1F8B0800DEADBEEF' WHERE rowid =
                    (SELECT rowid FROM tiles WHERE tile_data IS NOT NULL ORDER BY zoom_level, tile_column, tile_row LIMIT 1)
                """)
            let before = try Files.fingerprint(base)

            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: base) }

            guard case .resultMismatch(let expected, let actual)? = error?.reason else {
                Issue.record("expected resultMismatch, got \(String(describing: error))")
                return
            }
            #expect(expected == (try TilesetHash.compute(ofFileAt: target).hex))
            #expect(actual != expected)
            #expect(error?.path == delta)
            #expect(try Files.fingerprint(base) == before, "a failed apply changed the base")
        }

        /// With `hashes: .byCaller` and a delta without mapgate's LtHash (martin's) a wrong base
        /// is not caught by `apply`: the result's own hash differs from the `targetHash` the caller
        /// is told to check, and the file says the target.
        @Test func byCallerLeavesTheResultCheckToTheCaller() throws {
            let directory = try TemporaryDirectory()
            let baseTiles = Files.pyramid(maxZoom: 3, png: true, seed: 11)
            let targetTiles = Self.edited(baseTiles, png: true, seed: 12)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, tiles: baseTiles, metadata: Self.baseMetadata)
            try Files.write(target, tiles: targetTiles, metadata: Self.targetMetadata)
            let delta = directory.file("delta.mbtiles")
            let made = try MBTilesDelta.make(from: base, to: target, output: delta)
            try SQLiteDatabase(path: delta, mode: .readWrite).execute("DELETE FROM metadata WHERE name = ?", [.text(MBTilesDelta.ltHashChangeKey)])

            let good = try Files.copy(base, to: directory, as: "good.mbtiles")
            let applied = try MBTilesDelta.apply(delta: delta, to: good, hashes: .byCaller)
            #expect(applied == made)
            #expect(!applied.resultChecked)
            #expect(try Files.tiles(of: good) == targetTiles)
            #expect(try TilesetHash.compute(ofFileAt: good).hex == applied.targetHash)

            let changed = try Files.copy(base, to: directory, as: "changed.mbtiles")
            let database = try SQLiteDatabase(path: changed, mode: .readWriteCreate)
            try database.execute("UPDATE tiles SET tile_data = X'00' WHERE zoom_level = 0")
            let unchecked = try MBTilesDelta.apply(delta: delta, to: changed, hashes: .byCaller)
            #expect(unchecked.targetHash == made.targetHash)
            #expect(try Files.metadata(of: changed)[MBTilesDelta.hashKey] == .some(made.targetHash))
            #expect(try TilesetHash.compute(ofFileAt: changed).hex != unchecked.targetHash, "the caller's check is what catches it")
        }

        /// With mapgate's LtHash in the delta, `hashes: .byCaller` checks the result itself, in the
        /// time of the changed tiles: a tampered delta, or a base whose replaced tiles are not the
        /// ones the delta was made for, is refused; a base changed only where the delta does not
        /// write is not seen (the MD5 of the whole result would see it; documented).
        @Test func byCallerChecksTheResultByTheDeltasLtHash() throws {
            let directory = try TemporaryDirectory()
            let baseTiles = Files.pyramid(maxZoom: 3, png: true, seed: 13)
            let targetTiles = Self.edited(baseTiles, png: true, seed: 14)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, layout: .normalized, tiles: baseTiles, metadata: Self.baseMetadata)
            try Files.write(target, tiles: targetTiles, metadata: Self.targetMetadata)
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: base, to: target, output: delta)

            let good = try Files.copy(base, to: directory, as: "good.mbtiles")
            let applied = try MBTilesDelta.apply(delta: delta, to: good, hashes: .byCaller)
            #expect(applied.resultChecked)
            #expect(try Files.tiles(of: good) == targetTiles)
            #expect(try TilesetHash.compute(ofFileAt: good).hex == applied.targetHash)

            // A tile the delta replaces, changed in the base: refused.
            let replacedKey = try #require(targetTiles.keys.sorted().first { baseTiles[$0] != nil && targetTiles[$0] != baseTiles[$0] })
            let untouchedKey = try #require(baseTiles.keys.sorted().first { targetTiles[$0] == baseTiles[$0] })
            func changedBase(_ key: TileKey, _ name: String) throws -> String {
                let copy = directory.file(name)
                var tiles = baseTiles
                tiles[key] = .some(Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3]))
                try Files.write(copy, layout: .normalized, tiles: tiles, metadata: Self.baseMetadata)
                return copy
            }
            let replaced = try changedBase(replacedKey, "replaced.mbtiles")
            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: replaced, hashes: .byCaller) }
            guard case .resultTilesMismatch(let expected, let actual)? = error?.reason else {
                Issue.record("expected resultTilesMismatch, got \(String(describing: error))")
                return
            }
            #expect(expected.count == 16 && actual != expected)
            #expect(error?.localizedDescription.contains("the delta gives other tiles than it promises") == true)

            // The delta's rows tampered with (its hashes kept): refused.
            let tampered = try Files.copy(delta, to: directory, as: "tampered.mbtiles")
            try SQLiteDatabase(path: tampered, mode: .readWrite).execute(
                "UPDATE tiles SET tile_data = X'89504E4700' WHERE rowid = (SELECT rowid FROM tiles WHERE tile_data IS NOT NULL LIMIT 1)")
            let fresh = try Files.copy(base, to: directory, as: "fresh.mbtiles")
            #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: tampered, to: fresh, hashes: .byCaller) }

            // A tile the delta does not touch, changed in the base: not seen by the LtHash.
            let untouched = try changedBase(untouchedKey, "untouched.mbtiles")
            #expect(try MBTilesDelta.apply(delta: delta, to: untouched, hashes: .byCaller).resultChecked)
        }

        /// With mapgate's LtHash, the caller no longer passes over the result's tiles: the apply
        /// gives the change in the tile count (the base's count plus it is the result's), and checks
        /// each tile the delta writes as every tile is checked at install. A gzip bomb, a tile off
        /// its zoom level's grid, or one written twice into a base without the unique index (found
        /// by an attack), is refused even under a key that sums right (one its publisher made for
        /// it; a `publish` of such a target refuses it).
        @Test(arguments: ["bomb", "off the grid", "twice"])
        func byCallerCountsTheChangeAndChecksEachTileItWrites(bad: String) throws {
            let directory = try TemporaryDirectory()
            let (base, delta, baseTiles, targetTiles) = try Self.flatDelta(maxZoom: 3, seed: 23, in: directory)
            let good = try Files.copy(base, to: directory, as: "good.mbtiles")
            let applied = try MBTilesDelta.apply(delta: delta, to: good, hashes: .byCaller)
            #expect(applied.resultChecked)
            #expect(applied.tileCountChange == targetTiles.count - baseTiles.count)
            #expect(try TilesetHash.compute(ofFileAt: good).tileCount == baseTiles.count + (applied.tileCountChange ?? 0))

            // The delta made to write a bad tile, with the key of the result it gives.
            var resultTiles = targetTiles
            var twice = TilesLtHash()
            let deltaDatabase = try SQLiteDatabase(path: delta, mode: .readWrite)
            if bad == "twice" {
                let key = try #require(targetTiles.keys.sorted().first { baseTiles[$0] != nil && targetTiles[$0] != baseTiles[$0] })
                let bytes = try #require(targetTiles[key] ?? nil)
                // The delta's tiles without their key, one given twice.
                try deltaDatabase.execute("CREATE TABLE given AS SELECT * FROM tiles; DROP TABLE tiles; ALTER TABLE given RENAME TO tiles")
                try deltaDatabase.execute(
                    "INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)",
                    [.integer(Int64(key.zoom)), .integer(Int64(key.column)), .integer(Int64(key.row)), .blob(bytes)])
                let hasher = try TilesetHasher(ltHash: true)
                try hasher.add(zoom: key.zoom, column: key.column, row: key.row, data: bytes)
                twice = try #require(try hasher.finalize().ltHash)
            } else if bad == "bomb" {
                let key = try #require(targetTiles.keys.sorted().first { baseTiles[$0] != nil && targetTiles[$0] != baseTiles[$0] })
                let bomb = try GzipDeflater.compress(Data(count: 64 << 20))
                resultTiles[key] = .some(bomb)
                try deltaDatabase.execute(
                    "UPDATE tiles SET tile_data = ? WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                    [.blob(bomb), .integer(Int64(key.zoom)), .integer(Int64(key.column)), .integer(Int64(key.row))])
            } else {
                var generator = SeededGenerator(seed: 25)
                let bytes = Files.tileBytes(png: true, size: 40, using: &generator)
                resultTiles[TileKey(1, 5, 0)] = .some(bytes)
                try deltaDatabase.execute("INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (1, 5, 0, ?)", [.blob(bytes)])
            }
            func ltHash(_ tiles: [TileKey: Data?]) throws -> TilesLtHash {
                let hasher = try TilesetHasher(ltHash: true)
                for key in tiles.keys.sorted() { try hasher.add(zoom: key.zoom, column: key.column, row: key.row, data: tiles[key] ?? nil) }
                return try #require(try hasher.finalize().ltHash)
            }
            var result = try ltHash(resultTiles)
            result.add(twice)
            let key = try TilesLtHash.changeDigest(from: try ltHash(baseTiles), to: result)
            try deltaDatabase.execute("UPDATE metadata SET value = ? WHERE name = ?", [.text(key), .text(MBTilesDelta.ltHashChangeKey)])
            // The key sums right: a result taken whole (no tile checks) would be installed.
            let unchecked = try Files.copy(base, to: directory, as: "unchecked.mbtiles")
            if bad == "twice" { try SQLiteDatabase(path: unchecked, mode: .readWrite).execute("DROP INDEX tile_index") }
            let reference = try TilesetHash.compute(ofFileAt: base, ltHash: true)
            #expect(try TilesLtHash.changeDigest(from: try #require(reference.ltHash), to: result) == key)

            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: unchecked, hashes: .byCaller) }
            let reason = error?.localizedDescription ?? ""
            let said = ["bomb": "a gzip bomb", "off the grid": "lies outside zoom 1's grid", "twice": "is stored twice"]
            #expect(reason.contains(try #require(said[bad])), "\(reason)")
            #expect(try Files.tiles(of: unchecked) == baseTiles, "a refused apply changes nothing")
        }

        /// The check hashes what landed in the file, not the delta's rows: in a normalized base
        /// whose image was changed under its old id (`tile_id` the MD5 of other bytes), a tile the
        /// delta writes with the old bytes is pointed at the changed image, and is refused (found
        /// by an attack: the delta's own rows gave the right sum, and the wrong tile installed).
        @Test func byCallerChecksWhatLandedInTheFileNotTheDeltasRows() throws {
            let directory = try TemporaryDirectory()
            let old = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 7, 7, 7])
            let (base, delta, _, imageID) = try Self.normalizedDelta(writing: old, seed: 16, in: directory) { $0[TileKey(2, 0, 0)] = .some(old) }
            // The installed copy's image of 2/0/0 (a tile the delta does not touch) changed in
            // place, its id kept (as pngquant over a normalized file does).
            let stale = try Files.copy(base, to: directory, as: "stale.mbtiles")
            let database = try SQLiteDatabase(path: stale, mode: .readWrite)
            try database.execute("UPDATE map SET tile_id = '\(imageID)' WHERE tile_id = (SELECT tile_id FROM images WHERE tile_data = ?)", [.blob(old)])
            try database.execute("UPDATE images SET tile_id = '\(imageID)', tile_data = X'89504E470D0A1A0A0808' WHERE tile_data = ?", [.blob(old)])

            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: stale, hashes: .byCaller) }
            guard case .resultTilesMismatch? = error?.reason else {
                Issue.record("expected resultTilesMismatch, got \(String(describing: error))")
                return
            }
        }

        /// An image the delta adds is seen through every `map` row that uses its id, not only at
        /// the places the delta names: a row left pointing at no image (hidden by the `tiles`
        /// view) shows the new image at a place no version has, and the delta is refused (found by
        /// an attack: it was installed, and `tile` served the tile).
        @Test func byCallerSeesAnImageTheDeltaAddsWhereverItIsUsed() throws {
            let directory = try TemporaryDirectory()
            let added = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 5, 5, 5])
            let (base, delta, targetTiles, md5) = try Self.normalizedDelta(writing: added, seed: 19, in: directory)
            // The installed copy has a `map` row at 3/0/0 whose image is missing: no tile there.
            let dangling = try Files.copy(base, to: directory, as: "dangling.mbtiles")
            try SQLiteDatabase(path: dangling, mode: .readWrite).execute("INSERT INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (3, 0, 0, '\(md5)')")
            #expect(try Files.tiles(of: dangling)[TileKey(3, 0, 0)] == nil)

            let error = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: delta, to: dangling, hashes: .byCaller) }
            guard case .resultTilesMismatch? = error?.reason else {
                Issue.record("expected resultTilesMismatch, got \(String(describing: error))")
                return
            }
            // Without the row, the same delta applies and is checked.
            let clean = try Files.copy(base, to: directory, as: "clean.mbtiles")
            let applied = try MBTilesDelta.apply(delta: delta, to: clean, hashes: .byCaller)
            #expect(applied.resultChecked)
            // Through a view, rows outside the checked places can change with them: no count is
            // given, and the caller passes over the result (found by an attack).
            #expect(applied.tileCountChange == nil)
            #expect(try Files.tiles(of: clean) == targetTiles)
        }

        /// A key that is not 64 lowercase ASCII hex digits is no key: the result is left to the
        /// caller's MD5, never refused as made wrong (found by an attack: a full-width "ａ" passed
        /// as a hex digit, and a good delta was refused).
        @Test(arguments: ["ａ" + String(repeating: "0", count: 61), String(repeating: "A", count: 64), String(repeating: "g", count: 64), "00"])
        func aKeyThatIsNotLowercaseHexIsNoKey(value: String) throws {
            let directory = try TemporaryDirectory()
            let (base, delta, _, targetTiles) = try Self.flatDelta(maxZoom: 2, seed: 17, in: directory)
            try SQLiteDatabase(path: delta, mode: .readWrite).execute(
                "UPDATE metadata SET value = ? WHERE name = ?", [.text(value), .text(MBTilesDelta.ltHashChangeKey)])
            let applied = try MBTilesDelta.apply(delta: delta, to: base, hashes: .byCaller)
            #expect(!applied.resultChecked)
            #expect(try Files.tiles(of: base) == targetTiles)
        }

        /// LtHash16 is a hash of the rows alone: the same rows in either layout give the same
        /// state, another tile's bytes another state, and a state's change from itself is the
        /// empty set's.
        @Test func theLtHashOfATilesetIsItsRowsSum() throws {
            let directory = try TemporaryDirectory()
            let tiles = Files.pyramid(maxZoom: 2, png: true, seed: 15)
            let flat = directory.file("flat.mbtiles")
            let normalized = directory.file("normalized.mbtiles")
            try Files.write(flat, layout: .flat, tiles: tiles, metadata: Self.baseMetadata)
            try Files.write(normalized, layout: .normalized, tiles: tiles, metadata: Self.baseMetadata)
            func ltHash(_ path: String) throws -> TilesLtHash {
                try #require(try TilesetHash.compute(ofFileAt: path, ltHash: true).ltHash)
            }
            let state = try ltHash(flat)
            #expect(state == (try ltHash(normalized)))
            #expect(state != TilesLtHash())
            var edited = tiles
            edited[TileKey(0, 0, 0)] = .some(Data([0x89, 0x50, 0x4E, 0x47, 9]))
            let other = directory.file("other.mbtiles")
            try Files.write(other, layout: .flat, tiles: edited, metadata: Self.baseMetadata)
            #expect(try ltHash(other) != state)
            #expect(try TilesLtHash.changeDigest(from: state, to: state) == (try TilesLtHash().digest))
            // Handed over tile by tile (as a writer does), the same rows give the same state.
            let hasher = try TilesetHasher(ltHash: true)
            for key in tiles.keys.sorted() {
                try hasher.add(zoom: key.zoom, column: key.column, row: key.row, data: tiles[key] ?? nil)
            }
            #expect(try hasher.finalize().ltHash == state)
        }

        @Test func filesThatAreNoDeltaAreRefused() throws {
            let directory = try TemporaryDirectory()
            let base = directory.file("base.mbtiles")
            try Files.write(base, tiles: Files.pyramid(maxZoom: 1, png: true, seed: 1), metadata: Self.baseMetadata)
            let plain = try Files.copy(base, to: directory, as: "plain.mbtiles")
            let noDelta = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: plain, to: base) }
            #expect(noDelta == DeltaError(path: plain, reason: .notADelta("no agg_tiles_hash_before_apply in its metadata")))

            let invalid = try TestPaths.shared("mbtiles/mbtileserver-invalid.mbtiles")
            let noMetadata = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: invalid, to: base) }
            #expect(noMetadata == DeltaError(path: invalid, reason: .notADelta("no metadata table")))

            let badHash = directory.file("bad-hash.mbtiles")
            try Files.write(
                badHash, layout: .martinFlat, tiles: [:],
                metadata: [MBTilesDelta.beforeApplyKey: "not a hash", MBTilesDelta.afterApplyKey: TilesetHash.emptyHex])
            let notMD5 = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: badHash, to: base) }
            #expect(notMD5?.reason == .notADelta("agg_tiles_hash_before_apply is \"not a hash\", not an MD5 hash"))
            // Quoted cut short (found by an attack: a million characters made a line of a megabyte).
            let longHash = directory.file("long-hash.mbtiles")
            try Files.write(
                longHash, layout: .martinFlat, tiles: [:],
                metadata: [MBTilesDelta.beforeApplyKey: String(repeating: "A", count: 1_000_000), MBTilesDelta.afterApplyKey: TilesetHash.emptyHex])
            let long = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: longHash, to: base) }
            #expect(long?.reason == .notADelta("agg_tiles_hash_before_apply is \"\(String(repeating: "A", count: 64))…\", not an MD5 hash"))

            let binary = directory.file("bindiff.mbtiles")
            try Files.write(binary, layout: .martinFlat, tiles: [:], metadata: MartinSnapshots.difMetadata)
            try SQLiteDatabase(path: binary, mode: .readWriteCreate).execute("CREATE TABLE bsdiffraw (zoom_level INTEGER)")
            let unsupported = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: binary, to: base) }
            #expect(unsupported?.localizedDescription.contains("binary-diff deltas") == true)

            let same = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: base, to: base) }
            #expect(same?.localizedDescription.contains("are the same file") == true)

            let oddView = directory.file("odd-view.mbtiles")
            let odd = try SQLiteDatabase(path: oddView, mode: .readWriteCreate)
            try odd.execute(
                """
                CREATE TABLE metadata (name TEXT, value TEXT);
                CREATE TABLE pyramid (z INTEGER, x INTEGER, y INTEGER, bytes BLOB);
                CREATE VIEW tiles AS SELECT z AS zoom_level, x AS tile_column, y AS tile_row, bytes AS tile_data FROM pyramid;
                """)
            let unknownLayout = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: binary, to: oddView) }
            #expect(unknownLayout?.localizedDescription.contains("tiles is a view over tables mapgate does not know how to update") == true)

            let missing = #expect(throws: DeltaError.self) { try MBTilesDelta.apply(delta: directory.file("none"), to: base) }
            #expect(missing == DeltaError(path: directory.file("none"), reason: .missingFile))
            #expect(missing?.kind == .io)
        }

        /// Files a delta cannot be made from say why, naming the file (found by an attack: a UTF-16
        /// file gave SQLite's raw ATTACH message, and REAL-typed rows a delta whose result did not
        /// check out, with no word of the cause).
        @Test func makeSaysWhyAUTF16OrRealRowedFileGetsNoDelta() throws {
            let directory = try TemporaryDirectory()
            let base = directory.file("base.mbtiles")
            try Files.write(base, tiles: MartinSnapshots.v1Tiles, metadata: [:])
            let wide = directory.file("wide.mbtiles")
            let utf16 = try runProcess("/bin/sh", ["-c", "(echo \"PRAGMA encoding = 'UTF-16le';\"; sqlite3 '\(base)' .dump) | sqlite3 '\(wide)'"])
            #expect(utf16.status == 0, "\(utf16.stderr)")
            let encoding = #expect(throws: DeltaError.self) { try MBTilesDelta.make(from: base, to: wide, output: directory.file("d1.mbtiles")) }
            #expect(encoding?.path == wide)
            #expect(encoding?.errorDescription?.contains("its text encoding is UTF-16le, and a delta needs UTF-8 files") == true, "\(String(describing: encoding))")

            let real = directory.file("real.mbtiles")
            let rows = try runProcess(
                "/usr/bin/sqlite3",
                [real, "ATTACH '\(base)' AS b; CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column REAL, tile_row REAL, tile_data BLOB); INSERT INTO tiles SELECT * FROM b.tiles"])
            #expect(rows.status == 0, "\(rows.stderr)")
            let typed = #expect(throws: DeltaError.self) { try MBTilesDelta.make(from: base, to: real, output: directory.file("d2.mbtiles")) }
            #expect(typed?.path == real)
            #expect(typed?.errorDescription?.contains("tiles have a tile_column or tile_row stored as a REAL number") == true, "\(String(describing: typed))")
        }

        @Test func makeRefusesDeltasExistingOutputAndNullTiles() throws {
            let directory = try TemporaryDirectory()
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, tiles: MartinSnapshots.v1Tiles, metadata: [:])
            try Files.write(target, tiles: MartinSnapshots.v2Tiles, metadata: [:])
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: base, to: target, output: delta)

            let exists = #expect(throws: DeltaError.self) { try MBTilesDelta.make(from: base, to: target, output: delta) }
            #expect(exists == DeltaError(path: delta, reason: .outputExists))

            let again = directory.file("again.mbtiles")
            let isDelta = #expect(throws: DeltaError.self) { try MBTilesDelta.make(from: base, to: delta, output: again) }
            #expect(isDelta == DeltaError(path: delta, reason: .isADelta))
            #expect(!FileManager.default.fileExists(atPath: again), "a failed make left its output behind")

            let holes = directory.file("holes.mbtiles")
            try Files.write(holes, tiles: MartinSnapshots.difTiles, metadata: [:])
            let nullTiles = #expect(throws: DeltaError.self) { try MBTilesDelta.make(from: base, to: holes, output: again) }
            #expect(nullTiles?.path == holes)
            #expect(nullTiles?.localizedDescription.contains("3 tiles have a NULL tile_data") == true)
            #expect(!FileManager.default.fileExists(atPath: again))
        }

        // MARK: - Helpers

        static let baseMetadata: [String: String?] = [
            "name": "region", "format": "png", "description": "to be removed", "version": "1",
        ]
        static let targetMetadata: [String: String?] = [
            "name": "region", "format": "png", "version": "2", "attribution": "© contributors",
        ]

        /// The base's tiles with 40 changed, 20 removed (none of them changed) and the 64 tiles of
        /// zoom 5's first 8 × 8 block added.
        static func edited(_ tiles: [TileKey: Data?], png: Bool, seed: UInt64) -> [TileKey: Data?] {
            var generator = SeededGenerator(seed: seed)
            var result = tiles
            let keys = tiles.keys.sorted().shuffled(using: &generator)
            for key in keys.prefix(40) {
                result[key] = .some(Files.tileBytes(png: png, size: Int.random(in: 20...300, using: &generator), using: &generator))
            }
            for key in keys.dropFirst(40).prefix(20) { result[key] = nil }
            for column in 0..<8 {
                for row in 0..<8 {
                    result[TileKey(5, column, row)] = .some(Files.tileBytes(png: png, size: 50, using: &generator))
                }
            }
            return result
        }

        /// A flat base (a pyramid to `maxZoom`, from `seed`), its tiles ``edited(_:png:seed:)``
        /// (from `seed + 1`) as the target, and the delta between them.
        static func flatDelta(
            maxZoom: Int, seed: UInt64, in directory: TemporaryDirectory
        ) throws -> (base: String, delta: String, baseTiles: [TileKey: Data?], targetTiles: [TileKey: Data?]) {
            let baseTiles = Files.pyramid(maxZoom: maxZoom, png: true, seed: seed)
            let targetTiles = edited(baseTiles, png: true, seed: seed + 1)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, tiles: baseTiles, metadata: baseMetadata)
            try Files.write(target, tiles: targetTiles, metadata: targetMetadata)
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: base, to: target, output: delta)
            return (base, delta, baseTiles, targetTiles)
        }

        /// A normalized base (a pyramid to zoom 2, changed by `editing`), a target in which tile
        /// 2/3/3 becomes `bytes`, the delta between them, and the id the apply gives the image of
        /// `bytes` in a normalized file (martin's: the MD5 of the bytes, lower case as these files' ids are).
        static func normalizedDelta(
            writing bytes: Data, seed: UInt64, in directory: TemporaryDirectory, editing: (inout [TileKey: Data?]) -> Void = { _ in }
        ) throws -> (base: String, delta: String, targetTiles: [TileKey: Data?], imageID: String) {
            var baseTiles = Files.pyramid(maxZoom: 2, png: true, seed: seed)
            editing(&baseTiles)
            var targetTiles = baseTiles
            targetTiles[TileKey(2, 3, 3)] = .some(bytes)
            let base = directory.file("base.mbtiles")
            let target = directory.file("target.mbtiles")
            try Files.write(base, layout: .normalized, tiles: baseTiles, metadata: baseMetadata)
            try Files.write(target, tiles: targetTiles, metadata: targetMetadata)
            let delta = directory.file("delta.mbtiles")
            try MBTilesDelta.make(from: base, to: target, output: delta)
            let bytesFile = directory.file("bytes.bin")
            try bytes.write(to: URL(fileURLWithPath: bytesFile))
            return (base, delta, targetTiles, String(try runProcess("/usr/bin/md5sum", [bytesFile]).stdout.prefix(32)))
        }

        static func expectNoOrphanImages(_ path: String) throws {
            expectNoOrphanImagesIn(try SQLiteDatabase(path: path, mode: .readOnly))
        }

        static func expectNoOrphanImagesIn(_ database: SQLiteDatabase) {
            let orphans = try? database.query(
                "SELECT count(*) FROM images WHERE tile_id NOT IN (SELECT tile_id FROM map WHERE tile_id IS NOT NULL)"
            ) { $0.int(0) }
            #expect(orphans == [0], "images no tile uses are left in \(database.path)")
        }
    }
}
