import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Inputs a GIS user's tools make ("Bad input, round two"): links, FIFOs, NULL tiles, a `format`
/// that lies, zooms outside 0–30.
@Suite struct PublishBadInputTests {
    let workspace: PublishWorkspace
    let tiles = DeltaTestFiles.pyramid(maxZoom: 3, png: true, seed: 7)

    init() throws {
        workspace = try PublishWorkspace()
    }

    /// The error a publish gives, as text ("" when it succeeded).
    func publishError(temporaryDirectory: String? = nil) -> String {
        do {
            try workspace.publish { options in
                if let temporaryDirectory { options.temporaryDirectory = temporaryDirectory }
            }
            return ""
        } catch {
            return (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    @Test func aSymbolicLinkToAFilePublishesLikeTheFile() throws {
        let target = workspace.work.file("elsewhere.mbtiles")
        try DeltaTestFiles.write(target, tiles: tiles, metadata: ["format": "png", "version": "1"])
        try FileManager.default.createSymbolicLink(atPath: workspace.input + "/linked.mbtiles", withDestinationPath: target)

        let report = try workspace.publish()
        #expect(report.regions.map(\.action) == [.added])
        let region = try #require(try workspace.catalog().region("linked"))
        #expect(region.installedSize == (try CatalogBuilder.size(target)))
        #expect(region.contentHash == (try TilesetHash.compute(ofFileAt: target).hex))
    }

    @Test func aFIFONamedMBTilesIsRefusedNotWaitedOn() throws {
        let fifo = workspace.input + "/pipe.mbtiles"
        #expect(mkfifo(fifo, 0o600) == 0)
        let started = Date()
        let message = publishError()
        #expect(message.contains("pipe.mbtiles: is a FIFO, not a regular file"), "\(message)")
        #expect(Date().timeIntervalSince(started) < 10)

        // Through a link too.
        try FileManager.default.removeItem(atPath: fifo)
        let elsewhere = workspace.work.file("fifo")
        #expect(mkfifo(elsewhere, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: fifo, withDestinationPath: elsewhere)
        #expect(publishError().contains("is a FIFO (through a symbolic link), not a regular file"))
    }

    /// A file whose name is not UTF-8 (found by an attack: "cannot be read: no such file") is said
    /// as such; the other files are still looked at in the same run.
    @Test func aFileNameThatIsNotUTF8IsSaidAsSuch() throws {
        let good = try workspace.writeRegion("good.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let bad = Array(workspace.input.utf8) + Array("/caf".utf8) + [0xE9] + Array(".mbtiles".utf8) + [0]
        #expect(bad.withUnsafeBufferPointer { link(good, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self)) } == 0)
        let message = publishError()
        #expect(message.contains("its file name is not UTF-8"), "\(message)")
        #expect(!message.contains("no such file"), "\(message)")
        // Bad input like every other file's (65), not a usage error (found by an attack: 64).
        do {
            try workspace.publish { _ in }
        } catch let error as PublishError {
            #expect(error.kind == .badData, "\(error)")
        }
    }

    /// A folder of hidden files only says so (found by an attack: "no .mbtiles or .pmtiles file in
    /// it"), and a FIFO in the place of the previous catalog is said as what it is (found by the
    /// same attack: "permission denied").
    @Test func hiddenInputsAndAFIFOCatalogAreSaidAsWhatTheyAre() throws {
        _ = try workspace.writeRegion(".hidden.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let hidden = publishError()
        #expect(hidden.contains("hidden ones (.hidden.mbtiles)"), "\(hidden)")
        _ = try workspace.writeRegion("shown.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let output = workspace.work.file("out-fifo")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        #expect(mkfifo(output + "/catalog.json", 0o644) == 0)
        do {
            try workspace.publish { $0.outputDirectory = output }
            Issue.record("published over a FIFO catalog")
        } catch let error as PublishError {
            #expect(error.reason.contains("it is not a regular file (a FIFO, a device or a folder)"), "\(error)")
            #expect(error.kind == .io)
        }
    }

    /// A PMTiles archive whose one tile is shared by a run of 2^25 tile ids (found by an attack:
    /// 313 bytes of archive wrote 1.4 GB in $TMPDIR, one row per tile): what converting it needs
    /// (here 32 PiB: a 1 GiB tile, the file sparse, so that no disk has the room) is said before
    /// anything is written.
    @Test func anArchiveThatConvertsToMoreThanTheDiskHoldsIsRefusedFirst() throws {
        let tileLength = 1 << 30
        let tile = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let root = PMTilesDirectory(entries: [PMTilesDirectory.Entry(tileID: 0, offset: 0, length: UInt32(tileLength), runLength: 1 << 25)]).encoded
        let metadata = Data("{}".utf8)
        var header = PMTilesHeader()
        header.internalCompression = .none
        header.tileType = .png
        header.maxZoom = 12
        header.rootOffset = 127
        header.rootLength = UInt64(root.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadata.count)
        header.leafDirectoriesOffset = header.metadataOffset + header.metadataLength
        header.tileDataOffset = header.leafDirectoriesOffset
        header.tileDataLength = UInt64(tileLength)
        let archive = workspace.input + "/ocean.pmtiles"
        try (header.bytes + root + metadata + tile).write(to: URL(fileURLWithPath: archive))
        #expect(truncate(archive, off_t(127 + root.count + metadata.count + tileLength)) == 0)
        try Data(#"{"ocean.pmtiles": {"version": "1"}}"#.utf8).write(to: URL(fileURLWithPath: workspace.input + "/regions.json"))
        let temporary = workspace.work.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let started = Date()
        let message = publishError(temporaryDirectory: temporary)
        #expect(message.contains("needs up to") && message.contains("set TMPDIR to a folder with room"), "\(message)")
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(((try? FileManager.default.subpathsOfDirectory(atPath: temporary)) ?? []).allSatisfy { !$0.hasSuffix(".mbtiles") })
    }

    @Test func aNullTileIsRefusedNamingTheTile() throws {
        var holed = tiles
        holed[TileKey(2, 1, 3)] = .some(nil)
        try workspace.writeRegion("holes.mbtiles", tiles: holed, metadata: ["version": "1"])
        let message = publishError()
        #expect(message.contains("holes.mbtiles: tile 2/1/3 (z/x/TMS row) has no data: its tile_data is NULL"), "\(message)")
        #expect(!workspace.exists("catalog.json"))
    }

    @Test(arguments: [
        ("jpg", true, "(z/x/TMS row) is png; set metadata \"format\""),
        ("webp", true, "(z/x/TMS row) is png; set metadata \"format\""),
        ("pbf", true, "(z/x/TMS row) is png; set metadata \"format\""),
        ("png", false, "(z/x/TMS row) is gzip (pbf); set metadata \"format\""),
    ])
    func aFormatThatIsNotTheTilesIsRefused(format: String, pngTiles: Bool, expected: String) throws {
        let tiles = DeltaTestFiles.pyramid(maxZoom: 1, png: pngTiles, seed: 3)
        try workspace.writeRegion("liar.mbtiles", tiles: tiles, metadata: ["version": "1", "format": format])
        let message = publishError()
        #expect(message.contains("liar.mbtiles: the tile format is \(format) (metadata \"format\" = \"\(format)\") but tile "), "\(message)")
        #expect(message.contains(expected), "\(message)")
    }

    /// An empty raster tile is said as what it is: its format is right, the tile has no image
    /// (the refusal told the publisher to change metadata "format").
    /// A column or row that is not a whole number (found by an attack: published, though no
    /// client can ask for the tile, and read by the content hash as another tile's).
    @Test(arguments: ["0.5", "X'00'", "'abc'"])
    func aTileColumnThatIsNotAWholeNumberIsRefused(_ column: String) throws {
        let path = try workspace.writeRegion("odd.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let moved = try runProcess("/usr/bin/sqlite3", [path, "UPDATE tiles SET tile_column = \(column) WHERE zoom_level = 1 AND tile_column = 1 AND tile_row = 1"])
        #expect(moved.status == 0, "\(moved.stderr)")
        let message = publishError()
        #expect(message.contains("odd.mbtiles: 1 tiles have a tile_column or tile_row that is not a whole number"), "\(message)")
        #expect(!workspace.exists("catalog.json"))
    }

    @Test func anEmptyRasterTileIsSaidToBeEmpty() throws {
        var tiles = DeltaTestFiles.pyramid(maxZoom: 1, png: true, seed: 3)
        tiles[TileKey(0, 0, 0)] = .some(Data())
        try workspace.writeRegion("hollow.mbtiles", tiles: tiles, metadata: ["version": "1", "format": "png"])
        let message = publishError()
        #expect(message.contains("tile 0/0/0 (z/x/TMS row) is empty (0 bytes), which no png tile can be"), "\(message)")
        #expect(!message.contains("set metadata"), "\(message)")
    }

    /// Without `format` metadata the format is told from the tiles that have bytes: an empty
    /// first tile was the only one looked at, and the file was said to have no known format (found
    /// by an attack); now the empty tile is named as what is wrong.
    @Test func anEmptyFirstTileDoesNotHideTheFormat() throws {
        let tiles = DeltaTestFiles.pyramid(maxZoom: 1, png: true, seed: 3)
        let path = try workspace.writeRegion("hollow.mbtiles", tiles: tiles, metadata: ["version": "1", "format": nil])
        // The empty tile is the table's first row, the one read first.
        let edit = try runProcess(
            "/usr/bin/sqlite3", [path, "DELETE FROM metadata WHERE name = 'format'; DELETE FROM tiles WHERE zoom_level = 0; INSERT INTO tiles (rowid, zoom_level, tile_column, tile_row, tile_data) VALUES (-1, 0, 0, 0, X'')"])
        #expect(edit.status == 0, "\(edit.stderr)")
        let message = publishError()
        #expect(message.contains("tile 0/0/0 (z/x/TMS row) is empty (0 bytes), which no png tile can be"), "\(message)")
        // Every tile empty: said as such, not as an unknown format.
        let copy = workspace.work.file("hollow-copy.mbtiles")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try runProcess("/usr/bin/sqlite3", [path, "UPDATE tiles SET tile_data = X''"]).status == 0)
        #expect(publishError().contains("every tile is empty (0 bytes or NULL)"), "\(publishError())")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: copy, toPath: path)
        #expect(try runProcess("/usr/bin/sqlite3", [path, "DELETE FROM tiles WHERE zoom_level = 0"]).status == 0)
        #expect(publishError() == "")
        #expect(try workspace.catalog().regions.map(\.format) == [.png])
    }

    /// An input left gzipped (`x.mbtiles` that is `x.mbtiles.gz` renamed) is said to be gzip data
    /// to unpack, not a package "gzipped twice" (publish unpacks nothing; found by an attack).
    @Test func aGzippedInputIsSaidToBeGzipped() throws {
        let path = try workspace.writeRegion("packed.mbtiles", tiles: tiles, metadata: ["version": "1"])
        #expect(try runProcess("/bin/sh", ["-c", "gzip -c '\(path)' > '\(path).gz' && mv '\(path).gz' '\(path)'"]).status == 0)
        let message = publishError()
        #expect(message.contains("packed.mbtiles: gzip-compressed data, not an MBTiles (SQLite) file: unpack it first (gunzip -c FILE > UNPACKED.mbtiles)"), "\(message)")
        #expect(!message.contains("twice"), "\(message)")
    }

    /// A metadata name given twice with different values is refused naming both values (found by
    /// an attack: the last row's version was published without a word); the same value twice is
    /// one value.
    @Test func metadataGivenTwiceWithDifferentValuesIsRefused() throws {
        let path = try workspace.writeRegion("twice.mbtiles", tiles: tiles, metadata: ["version": "1"])
        #expect(try runProcess("/usr/bin/sqlite3", [
                    path,
                    // A metadata table without a unique name, as mbutil and GDAL make it.
                    "CREATE TABLE m2 (name TEXT, value TEXT); INSERT INTO m2 SELECT name, value FROM metadata; DROP TABLE metadata; ALTER TABLE m2 RENAME TO metadata; INSERT INTO metadata VALUES ('version', '2'); INSERT INTO metadata VALUES ('format', 'png')",
                ]).status == 0)
        let message = publishError()
        #expect(message.contains("twice.mbtiles: metadata \"version\" is given 2 times with different values (\"1\", \"2\"); keep one row"), "\(message)")
        #expect(!message.contains("format"), "\(message)")
        #expect(!workspace.exists("catalog.json"))
        // Compared as the text read (found by an attack): a name stored as a blob is the name its
        // bytes spell; 0 and '0' are one value; a NOCASE column does not make two names one.
        let blob = try runProcess(
            "/usr/bin/sqlite3", [path, "DELETE FROM metadata WHERE name = 'version' AND value = '2'; INSERT INTO metadata VALUES (CAST('version' AS BLOB), '9')"])
        #expect(blob.status == 0, "\(blob.stderr)")
        #expect(publishError().contains("metadata \"version\" is given 2 times with different values (\"1\", \"9\")"))
        let nocase = try runProcess(
            "/usr/bin/sqlite3",
            [
                path,
                "DELETE FROM metadata WHERE value = '9'; INSERT INTO metadata VALUES ('minzoom', 0), ('minzoom', '0'); CREATE TABLE m3 (name TEXT COLLATE NOCASE, value TEXT); INSERT INTO m3 SELECT name, value FROM metadata; DROP TABLE metadata; ALTER TABLE m3 RENAME TO metadata; INSERT INTO metadata VALUES ('VERSION', '9')",
            ])
        #expect(nocase.status == 0, "\(nocase.stderr)")
        #expect(publishError() == "")
    }

    @Test func rawAndGzippedProtobufTilesAreBothPBF() throws {
        // A raw MVT tile starts with field 3 (layers), length-delimited: 0x1A.
        let raw: [TileKey: Data?] = [
            TileKey(0, 0, 0): .some(Data([0x1A, 0x02, 0x0A, 0x00])), TileKey(1, 0, 0): .some(Data()),
            TileKey(1, 0, 1): .some(Data([0x78, 0x9C, 0x03, 0x00])),  // zlib, as some older tools stored them
        ]
        let json = "{\"vector_layers\":[{\"id\":\"roads\"}]}"
        try workspace.writeRegion("raw.mbtiles", tiles: raw, metadata: ["version": "1", "format": "pbf", "json": json])
        try workspace.writeRegion(
            "zipped.mbtiles", tiles: DeltaTestFiles.pyramid(maxZoom: 1, png: false, seed: 4), metadata: ["version": "1", "format": "pbf", "json": json])
        #expect(publishError() == "")
        #expect(try workspace.catalog().regions.map(\.format) == [.pbf, .pbf])
    }

    @Test func zoomFollowsTheOneRule() throws {
        // Metadata says 2–9: the catalog says 0–9 (tiles' 0–3 widened), as sync, list and TileJSON do.
        let path = try workspace.writeRegion("wide.mbtiles", tiles: tiles, metadata: ["version": "1", "minzoom": "2", "maxzoom": "9"])
        try workspace.publish()
        let region = try #require(try workspace.catalog().region("wide"))
        #expect((region.minzoom, region.maxzoom) == (0, 9))
        #expect(try MBTilesInspection.inspect(path).zoom == 0...9)
        #expect(try MBTilesFile(path: path).zoomRange() == 0...9)

        var below = tiles
        below[TileKey(-1, 0, 0)] = .some(tiles[TileKey(0, 0, 0)]!)
        try workspace.writeRegion("wide.mbtiles", tiles: below, metadata: ["version": "2"])
        #expect(publishError().contains("it has tiles at zoom -1–3, outside 0–30"))
    }

    /// A raw MVT tile with the given layers (no features).
    static func vectorTile(_ names: [String]) -> Data {
        var tile: [UInt8] = []
        for name in names {
            let layer: [UInt8] = [0x0A, UInt8(name.utf8.count)] + Array(name.utf8) + [0x78, 0x02]  // name, version 2
            tile += [0x1A, UInt8(layer.count)] + layer
        }
        return Data(tile)
    }

    @Test func layerNamesAreReadFromRawAndGzippedTiles() throws {
        #expect(try VectorTileLayers.names(inTile: Self.vectorTile(["roads", "water", "roads"])) == ["roads", "water"])
        #expect(try VectorTileLayers.names(inTile: GzipDeflater.compress(Self.vectorTile(["poi"]))) == ["poi"])
        #expect(throws: VectorTileLayers.DecodingError.self) { try VectorTileLayers.names(inTile: Data([0x1A, 0x7F, 0x0A])) }
        // A zero key (field number 0) is refused at once: a tile of zeros is not walked byte by byte.
        let zeros = #expect(throws: VectorTileLayers.DecodingError.self) { try VectorTileLayers.names(inTile: Data(count: 1 << 20)) }
        #expect(zeros?.reason.contains("field number 0") == true, "\(String(describing: zeros))")
        // tippecanoe's tiles of the real fixture: the layer its own json lists.
        let cities = try MBTilesFile(path: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"))
        let listed = VectorStyle.layers(fromMetadataJSON: try cities.metadata()["json"]).map(\.id)
        #expect(!listed.isEmpty)
        #expect(try cities.sampledVectorLayerNames() == listed)
    }

    @Test func aPBFRegionWithoutVectorLayersIsRefusedWithTheLayersItsTilesHave() throws {
        let path = workspace.input + "/cities.mbtiles"
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), toPath: path)
        let listed = VectorStyle.layers(fromMetadataJSON: try MBTilesFile(path: path).metadata()["json"]).map(\.id)
        let result = try runProcess("/usr/bin/sqlite3", [path, "DELETE FROM metadata WHERE name = 'json'"])
        #expect(result.status == 0, "\(result.stderr)")
        let message = publishError()
        #expect(message.contains("cities.mbtiles: a pbf region needs \"vector_layers\" in its metadata \"json\""), "\(message)")
        #expect(message.contains("Its tiles have the layers \(listed.joined(separator: ", ")): set metadata \"json\" to {\"vector_layers\":[{\"fields\":{},\"id\":\"\(listed[0])\"}"), "\(message)")

        // Raw tiles, and a json over the 1 MiB cap (left out, so the same as none).
        try FileManager.default.removeItem(atPath: path)
        let big = "{\"vector_layers\":[{\"id\":\"roads\"}],\"pad\":\"" + String(repeating: "x", count: 1 << 20) + "\"}"
        try workspace.writeRegion(
            "raw.mbtiles", tiles: [TileKey(0, 0, 0): .some(Self.vectorTile(["roads", "water"]))], metadata: ["version": "1", "format": "pbf", "json": big])
        #expect(publishError().contains("Its tiles have the layers roads, water"))
    }

    /// Issue 26 item 3: `vector_layers` naming only a layer the tiles do not have published with
    /// exit 0 and a blank viewer. It is refused with the layers the tiles have; one match is enough.
    @Test func vectorLayersThatNameNoLayerOfTheTilesAreRefused() throws {
        try workspace.writeRegion(
            "roads.mbtiles", tiles: [TileKey(0, 0, 0): .some(Self.vectorTile(["roads", "water"]))],
            metadata: ["version": "1", "format": "pbf", "json": #"{"vector_layers":[{"id":"nosuchlayer"}]}"#])
        let message = publishError()
        #expect(message.contains("roads.mbtiles: its metadata \"json\" lists the vector_layers nosuchlayer, but its tiles have the layers roads, water"), "\(message)")
        #expect(message.contains(#"{"vector_layers":[{"fields":{},"id":"roads"},{"fields":{},"id":"water"}]}"#), "\(message)")
        try workspace.writeRegion(
            "roads.mbtiles", tiles: [TileKey(0, 0, 0): .some(Self.vectorTile(["roads", "water"]))],
            metadata: ["version": "1", "format": "pbf", "json": #"{"vector_layers":[{"id":"nosuchlayer"},{"id":"water"}]}"#])
        #expect(try workspace.publish().regions.map(\.id) == ["roads"])
    }

    /// Issue 26 item 10: a regions.json nested 513 levels deep was "not a JSON object keyed by
    /// file name"; it says it is nested too deeply, and the limit.
    @Test func aDeeplyNestedRegionsJSONSaysSo() throws {
        try workspace.writeRegion("a.mbtiles", tiles: tiles, metadata: ["version": "1"])
        let deep = "{\"a.mbtiles\": " + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        try Data(deep.utf8).write(to: URL(fileURLWithPath: workspace.input + "/regions.json"))
        let message = publishError()
        #expect(message.contains("regions.json: not valid JSON: nested too deeply: more than 512 arrays or objects inside each other (the limit"), "\(message)")
    }

    /// A regions.json that is a FIFO was "cannot read it: permission denied", even to root (found
    /// by an attack): it is refused as a FIFO, at once, without waiting for a writer.
    @Test func aRegionsJSONThatIsAFIFOIsRefusedAsSuch() throws {
        try workspace.writeRegion("a.mbtiles", tiles: tiles, metadata: ["version": "1"])
        #expect(mkfifo(workspace.input + "/regions.json", 0o644) == 0)
        let message = publishError()
        #expect(message.contains("regions.json: is a FIFO, not a regular file: refused"), "\(message)")
    }

    /// `--out` naming a regular file was "cannot create it: it already exists" (found by an attack).
    @Test func anOutputFolderThatIsAFileSaysSo() throws {
        try workspace.writeRegion("a.mbtiles", tiles: tiles, metadata: ["version": "1"])
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: workspace.output))
        let message = publishError()
        #expect(message.contains("\(workspace.output) is a regular file, not a folder"), "\(message)")
        #expect(try String(contentsOfFile: workspace.output, encoding: .utf8) == "not a folder")
    }

    @Test func aVersionFromMetadataIsExplainedOneFromRegionsJSONIsNot() throws {
        try workspace.writeRegion("gdal.mbtiles", tiles: tiles, metadata: ["version": "1.1"])
        try workspace.writeRegion("chosen.mbtiles", tiles: tiles, metadata: ["version": "1.1"])
        try Data(#"{"chosen.mbtiles": {"version": "2026.11"}}"#.utf8).write(to: URL(fileURLWithPath: workspace.input + "/regions.json"))
        let report = try workspace.publish()
        #expect(report.notes == [
            "region gdal: version \"1.1\" is the metadata \"version\" of gdal.mbtiles (GDAL writes 1.1 and tippecanoe 2 there unless told otherwise); to choose it, give \"version\" for \"gdal.mbtiles\" in regions.json or set the file's metadata"
        ])
        // Said when a version is published, not on every unchanged run.
        #expect(try workspace.publish().notes.isEmpty)
    }

    @Test func xyzRowsAreRefusedNotServedUpsideDown() throws {
        try workspace.writeRegion("xyz.mbtiles", tiles: tiles, metadata: ["version": "1", "scheme": "xyz"])
        let message = publishError()
        #expect(message.contains("xyz.mbtiles: metadata scheme is \"xyz\": MBTiles rows are TMS"), "\(message)")
        try workspace.writeRegion("xyz.mbtiles", tiles: tiles, metadata: ["version": "1", "scheme": "tms"])
        #expect(publishError() == "")
    }

    @Test func aWALModeInputLeavesNoSideFilesAndPendingChangesAreRefused() throws {
        let path = try workspace.writeRegion("gdal.mbtiles", tiles: tiles, metadata: ["version": "1"])
        do {
            let writer = try SQLiteDatabase(path: path, mode: .readWriteCreate)
            #expect(try writer.query("PRAGMA journal_mode = WAL") { $0.text(0) } == ["wal"])
            try writer.execute("PRAGMA wal_autocheckpoint = 0")
            try writer.execute("INSERT INTO metadata (name, value) VALUES ('description', 'pending')")
            let message = publishError()
            #expect(message.contains("gdal.mbtiles: gdal.mbtiles-wal holds"), "\(message)")
            #expect(message.contains("of changes not yet in the file, which the package would miss"), "\(message)")
        }
        // The writer closed (SQLite checkpointed and removed its side files), as GDAL leaves a
        // file: still in WAL mode (header bytes 18 and 19 are 2).
        let header = try #require(FileHandle(forReadingAtPath: path)).readData(ofLength: 20)
        #expect(Array(header.suffix(2)) == [2, 2])
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.input) == ["gdal.mbtiles"])
        #expect(publishError() == "")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: workspace.input).sorted()
        #expect(inputs == ["gdal.mbtiles"], "\(inputs)")
    }
}
