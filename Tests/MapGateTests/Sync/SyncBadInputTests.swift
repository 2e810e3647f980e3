import Foundation
import MapGate
import TestSupport
import Testing

/// Packages a publisher's tools can make, refused by `sync`'s validation by the same rules
/// `publish` applies ("Bad input, round two").
@Suite struct SyncBadInputTests {
    let harness: SyncHarness

    init() throws {
        harness = try SyncHarness()
    }

    /// Offers a package made from `tiles` and `metadata` as region `id` and syncs it; returns the
    /// error text. `contentHash`: the catalog declares this hash of the tiles.
    func syncError(
        _ id: String, tiles: [TileKey: Data?], metadata: [String: String?], format: String, maxzoom: Int = 14, contentHash: String? = nil
    ) throws -> String {
        let path = harness.work.file("\(id).source.mbtiles")
        try DeltaTestFiles.write(path, tiles: tiles, metadata: metadata)
        try harness.builder.add(
            id: id, source: path, format: format, minzoom: 0, maxzoom: maxzoom, overrides: contentHash.map { ["contentHash": $0] } ?? [:])
        do {
            try harness.sync(id)
            return ""
        } catch {
            return (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    /// The data directory's `regions` is a file: sync said "cannot create it: it already exists"
    /// (found by an attack); it says what stands in the way, and leaves it.
    @Test func aRegionsFolderThatIsAFileSaysSo() throws {
        try harness.builder.add(id: "plain", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png")
        try FileManager.default.createDirectory(atPath: harness.directory.path, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: harness.directory.regionsPath)
        try Data("x".utf8).write(to: URL(fileURLWithPath: harness.directory.regionsPath))
        let error = #expect(throws: (any Error).self) { try harness.sync("plain") }
        let message = error.map(errorMessage) ?? ""
        #expect(message.contains("\(harness.directory.regionsPath) is a regular file, not a folder"), "\(message)")
        #expect(try String(contentsOfFile: harness.directory.regionsPath, encoding: .utf8) == "x")
    }

    /// Also when the catalog declares the tiles' hash, and they are not hashed again: the pass
    /// over them still checks them.
    @Test(arguments: [nil, "0123456789ABCDEF0123456789ABCDEF"])
    func aNullTileIsRefusedNamingRegionAndTile(contentHash: String?) throws {
        var tiles = DeltaTestFiles.pyramid(maxZoom: 2, png: true, seed: 1)
        tiles[TileKey(1, 0, 1)] = .some(nil)
        let message = try syncError("holes", tiles: tiles, metadata: ["format": "png"], format: "png", contentHash: contentHash)
        #expect(message.contains("region holes: invalid package: tile 1/0/1 (z/x/TMS row) has no data: its tile_data is NULL"), "\(message)")
        #expect(try harness.library.installed().isEmpty)
        #expect(!harness.leftovers.contains { $0.contains("installing") }, "\(harness.leftovers)")
    }

    @Test func aFormatThatIsNotTheTilesIsRefused() throws {
        let tiles = DeltaTestFiles.pyramid(maxZoom: 1, png: true, seed: 2)
        let message = try syncError("liar", tiles: tiles, metadata: ["format": "jpg"], format: "jpg")
        #expect(message.contains("region liar: invalid package: the tile format is jpg (metadata \"format\" = \"jpg\") but tile"), "\(message)")
        #expect(message.contains("is png"), "\(message)")
    }

    @Test func aTileAtZoomMinusOneIsRefusedAsPublishRefusesIt() throws {
        var tiles = DeltaTestFiles.pyramid(maxZoom: 1, png: true, seed: 3)
        tiles[TileKey(-1, 0, 0)] = tiles[TileKey(0, 0, 0)]
        let message = try syncError("deep", tiles: tiles, metadata: ["format": "png", "minzoom": "0", "maxzoom": "1"], format: "png")
        #expect(message.contains("region deep: invalid package: it has tiles at zoom -1–1, outside 0–30"), "\(message)")
    }

    @Test func listRecordsTheRangeByTheOneRule() throws {
        // Metadata 1–2 on tiles 0–3: list records 0–3, as the catalog and TileJSON say.
        let tiles = DeltaTestFiles.pyramid(maxZoom: 3, png: true, seed: 4)
        #expect(try syncError("narrow", tiles: tiles, metadata: ["format": "png", "minzoom": "1", "maxzoom": "2"], format: "png", maxzoom: 3) == "")
        let record = try harness.library.region("narrow")
        #expect(record.minzoom == 0 && record.maxzoom == 3)
    }

    @Test func aPBFRegionWithoutVectorLayersInstallsWithAWarning() throws {
        let source = harness.work.file("bare.mbtiles")
        try FileManager.default.copyItem(atPath: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), toPath: source)
        #expect(try runProcess("/usr/bin/sqlite3", [source, "DELETE FROM metadata WHERE name = 'json'"]).status == 0)
        try harness.builder.add(id: "bare", source: source, format: "pbf")
        let catalog = try harness.catalog()
        var notices: [String] = []
        let outcome = try harness.installer().sync(
            try #require(catalog.region("bare")), from: catalog, authorization: try harness.authorization(),
            lock: try DirectoryLock(directory: harness.directory), notice: { notices.append($0) })
        guard case .installed = outcome else { Issue.record("\(outcome)"); return }
        #expect(notices == ["region bare: a pbf region with no vector_layers in its metadata \"json\": the viewer and style.json will show nothing (tiles are served as usual)"])

        // One that has them installs in silence.
        try harness.builder.add(id: "cities", source: try TestPaths.shared("mbtiles/mbtileserver-world_cities.mbtiles"), format: "pbf")
        let withLayers = try harness.catalog()
        notices = []
        _ = try harness.installer().sync(
            try #require(withLayers.region("cities")), from: withLayers, authorization: try harness.authorization(),
            lock: try DirectoryLock(directory: harness.directory), notice: { notices.append($0) })
        #expect(notices.isEmpty, "\(notices)")
    }

    @Test func xyzRowsAreRefused() throws {
        let message = try syncError(
            "flipped", tiles: DeltaTestFiles.pyramid(maxZoom: 1, png: true, seed: 5), metadata: ["format": "png", "scheme": "XYZ"], format: "png")
        #expect(message.contains("region flipped: invalid package: metadata scheme is \"XYZ\": MBTiles rows are TMS"), "\(message)")
    }

    @Test func diskSpaceIsSaidInHumanUnits() throws {
        harness.freeSpace = { _ in 1000 }
        try harness.builder.add(
            id: "big", source: try TestPaths.shared("mbtiles/node-mbtiles-plain_1.mbtiles"), format: "png",
            overrides: ["size": 48_211_733, "installedSize": 2_500_000_000])
        let error = #expect(throws: RegionError.self) { try harness.sync("big") }
        let message = error?.localizedDescription ?? ""
        #expect(message.contains("needs 2.5 GB (download 48.2 MB, installed 2.5 GB), 1.0 KB available"), "\(message)")
    }
}
