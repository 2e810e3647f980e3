import Foundation
import MapGate
import TestSupport
import Testing

/// A store made in memory: tiles by XYZ address.
final class MemoryTileStore: TileStore {
    let path = "memory"
    var tiles: [String: Data] = [:]
    var rows: [String: String] = [:]

    func metadata() throws -> [String: String] { rows }

    func tile(z: Int, x: Int, y: Int) throws -> Data? { tiles["\(z)/\(x)/\(y)"] }

    func forEachTile(_ body: (Int, Int, Int, Data) throws -> Void) throws {
        let addresses = tiles.keys.map { $0.split(separator: "/").compactMap { Int($0) } }
            .sorted { ($0[0], $0[1], TileCoordinate.flippedRow($0[2], zoom: $0[0])) < ($1[0], $1[1], TileCoordinate.flippedRow($1[2], zoom: $1[0])) }
        for a in addresses { try body(a[0], a[1], a[2], tiles["\(a[0])/\(a[1])/\(a[2])"]!) }
    }
}

/// The PMTiles v3 writer (issue 39): round trips keep every tile, the reference reader reads every
/// archive it writes byte for byte, deduplication and runs, leaf directories past 16 KiB.
@Suite struct PMTilesWriterTests {
    let work: TemporaryDirectory

    init() throws {
        work = try TemporaryDirectory()
    }

    @discardableResult
    func write(_ store: any TileStore, format: TileFormat, to path: String) throws -> PMTilesWriter.Summary {
        var bytes = Data()
        let summary = try PMTilesWriter.write(store, metadata: try store.metadata(), format: format, scratchDirectory: work.path, path: path) { bytes.append($0) }
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(UInt64(bytes.count) == summary.bytes)
        return summary
    }

    func tiles(_ store: any TileStore) throws -> [String: Data] {
        var tiles: [String: Data] = [:]
        try store.forEachTile { z, x, y, data in tiles["\(z)/\(x)/\(y)"] = data }
        return tiles
    }

    @Test(arguments: [("mbtileserver-geography-class-png.mbtiles", TileFormat.png), ("mbtileserver-world_cities.mbtiles", TileFormat.pbf)])
    func aRoundTripFromMBTilesKeepsEveryTileAndTheReferenceReadsIt(_ fixture: String, _ format: TileFormat) throws {
        try #require(PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps")
        let source = try MBTilesFile(path: try TestPaths.shared("mbtiles/" + fixture))
        let original = try tiles(source)
        let archivePath = work.file("out.pmtiles")
        let summary = try write(source, format: format, to: archivePath)
        #expect(summary.addressedTiles == original.count)
        let archive = try PMTilesArchive(path: archivePath)
        #expect(archive.header.isClustered && archive.header.internalCompression == .gzip && archive.format == format)
        #expect(archive.header.tileCompression == (format == .pbf ? .gzip : .none))
        #expect(try tiles(archive) == original)
        #expect(try PMTilesReference.tiles(archivePath) == original, "the reference reader, byte for byte")
        // And back to MBTiles: every tile, the same agg_tiles_hash, the metadata kept.
        let back = work.file("back.mbtiles")
        try MBTilesWriter.write(archive, metadata: try archive.metadata(), to: back)
        let again = try MBTilesFile(path: back)
        #expect(try tiles(again) == original)
        #expect(try again.contentHash() == source.contentHash())
        let before = try source.metadata()
        let after = try again.metadata()
        for key in ["name", "version", "bounds", "format"] where before[key] != nil { #expect(after[key] == before[key], "\(key)") }
        if format == .pbf {
            let layers = try #require(try PMTilesReference.headerAndMetadata(archivePath).metadata["vector_layers"] as? [Any])
            #expect(!layers.isEmpty)
        }
    }

    @Test func equalTilesAreStoredOnceAndRunsAreMerged() throws {
        let store = MemoryTileStore()
        let ocean = Data([0x89, 0x50, 0x4E, 0x47, 1])
        for x in 0..<16 { for y in 0..<16 { store.tiles["4/\(x)/\(y)"] = ocean } }
        store.tiles["4/3/3"] = Data([0x89, 0x50, 0x4E, 0x47, 2])
        store.tiles["0/0/0"] = Data([0x89, 0x50, 0x4E, 0x47, 3])
        store.tiles["1/0/0"] = Data()
        let path = work.file("ocean.pmtiles")
        let summary = try write(store, format: .png, to: path)
        #expect(summary.addressedTiles == 257 && summary.tileContents == 3)
        #expect(summary.tileEntries < 10, "runs of the ocean tile: \(summary.tileEntries) entries")
        let archive = try PMTilesArchive(path: path)
        #expect(archive.header.tileDataLength == 15)
        var expected = store.tiles
        expected["1/0/0"] = nil  // an empty tile is no tile
        #expect(try tiles(archive) == expected)
        if PMTilesReference.isInstalled { #expect(try PMTilesReference.tiles(path) == expected) }
    }

    /// An empty vector tile is left out too: raw vector tiles are gzipped for the archive, and an
    /// empty one became 20 bytes of gzip around nothing (counted, and served by readers).
    @Test func anEmptyVectorTileIsLeftOutNotGzipped() throws {
        let store = MemoryTileStore()
        store.tiles["0/0/0"] = Data([0x1A, 0x02, 0x78, 0x02])
        store.tiles["1/0/0"] = Data()
        store.tiles["1/1/0"] = Data()
        let path = work.file("empty.pmtiles")
        let summary = try write(store, format: .pbf, to: path)
        #expect(summary.addressedTiles == 1, "\(summary)")
        let archive = try PMTilesArchive(path: path)
        #expect(try tiles(archive).keys.sorted() == ["0/0/0"])
    }

    /// The header's center is inside the bounds, as TileJSON requires of a center: one outside
    /// them is replaced by the middle of the bounds (it was copied as written).
    @Test func aCenterOutsideTheBoundsIsNotTheArchivesCenter() throws {
        let store = MemoryTileStore()
        store.rows = ["name": "far", "format": "png", "bounds": "126,36.5,128,38", "center": "10,10,8"]
        store.tiles["0/0/0"] = Data([0x89, 0x50, 0x4E, 0x47, 1])
        store.tiles["2/3/1"] = Data([0x89, 0x50, 0x4E, 0x47, 2])
        let path = work.file("far.pmtiles")
        _ = try write(store, format: .png, to: path)
        let header = try PMTilesArchive(path: path).header
        #expect(header.centerLongitudeE7 == 1_270_000_000 && header.centerLatitudeE7 == 372_500_000, "\(header)")
        #expect(header.centerZoom == 0)
        // Bounds across the antimeridian: their middle is on it, not on the other side of the world.
        #expect(MBTilesFile.middle(of: [170, -10, -170, 10]) == (180, 0))
        #expect(MBTilesFile.middle(of: [160, -10, -140, 20]) == (-170, 5))
        #expect(MBTilesFile.middle(of: [-10, -10, 30, 20]) == (10, 5))
        store.rows["bounds"] = "170,-10,-170,10"
        store.rows["center"] = "0,0,8"
        let across = work.file("across.pmtiles")
        _ = try write(store, format: .png, to: across)
        let acrossHeader = try PMTilesArchive(path: across).header
        #expect(acrossHeader.centerLongitudeE7 == 1_800_000_000)
        // The header's bounds do not wrap either (found by an attack): the band of latitudes.
        #expect(acrossHeader.minLongitudeE7 == -1_800_000_000 && acrossHeader.maxLongitudeE7 == 1_800_000_000, "\(acrossHeader)")
        #expect(acrossHeader.minLatitudeE7 == -100_000_000 && acrossHeader.maxLatitudeE7 == 100_000_000)
    }

    /// The header's center zoom is the metadata's rounded and held to the tiles' zooms, as
    /// TileJSON's is (found by an attack: 22 of a region of zooms 0 to 2 was written as it was,
    /// and 2.6 cut to 2).
    @Test(arguments: [("1,1,22", 2), ("1,1,2.6", 2), ("1,1,1.5", 2), ("1,1,1.4", 1), ("1,1,-3", 0), ("1,1,1e300", 0)] as [(String, UInt8)])
    func theCenterZoomIsOneOfTheTilesZooms(_ center: String, _ zoom: UInt8) throws {
        let store = MemoryTileStore()
        store.rows = ["name": "zooms", "format": "png", "bounds": "-10,-10,10,10", "center": center]
        store.tiles["0/0/0"] = Data([0x89, 0x50, 0x4E, 0x47, 1])
        store.tiles["2/1/1"] = Data([0x89, 0x50, 0x4E, 0x47, 2])
        let path = work.file("zooms-\(UUID().uuidString).pmtiles")
        _ = try write(store, format: .png, to: path)
        #expect(try PMTilesArchive(path: path).header.centerZoom == zoom)
    }

    @Test func leafDirectoriesCarryWhatTheRootCannot() throws {
        try #require(PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps")
        let store = MemoryTileStore()
        store.rows = ["name": "many", "format": "png", "bounds": "-180,-85,180,85", "center": "10,20,3"]
        // About 50,000 distinct tiles of scattered lengths at zoom 8, some places left empty: a
        // root with all of them would be far over 16 KiB.
        var random = UInt64(39)
        func next() -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(random >> 33)
        }
        for x in 0..<256 {
            for y in 0..<256 where next() % 4 != 0 {
                store.tiles["8/\(x)/\(y)"] = Data([0x89, 0x50, 0x4E, 0x47, UInt8(x), UInt8(y)]) + Data(repeating: 0, count: next() % 300)
            }
        }
        let path = work.file("many.pmtiles")
        let summary = try write(store, format: .png, to: path)
        #expect(summary.leafDirectories > 1 && summary.tileContents == store.tiles.count)
        let archive = try PMTilesArchive(path: path)
        #expect(archive.header.rootLength + 127 <= 16_384 && archive.header.leafDirectoriesLength > 0)
        for address in store.tiles.keys.sorted().prefix(200) {
            let parts = address.split(separator: "/").compactMap { Int($0) }
            #expect(try archive.tile(z: parts[0], x: parts[1], y: parts[2]) == store.tiles[address])
        }
        #expect(try tiles(archive) == store.tiles)
        #expect(try PMTilesReference.tiles(path) == store.tiles)
        let reference = try PMTilesReference.headerAndMetadata(path)
        // The metadata says zoom 3, the tiles are all of zoom 8: the center is at 8.
        #expect(reference.header["clustered"] as? Bool == true && reference.header["center_zoom"] as? Int == 8)
        #expect(reference.metadata["name"] as? String == "many")
        // The same store gives the same bytes.
        let again = work.file("again.pmtiles")
        try write(store, format: .png, to: again)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: URL(fileURLWithPath: again)))
    }

    @Test func rawProtobufTilesAreGzipped() throws {
        let store = MemoryTileStore()
        store.tiles["0/0/0"] = Data([0x1A, 0x02, 0x78, 0x02])
        let path = work.file("raw.pmtiles")
        try write(store, format: .pbf, to: path)
        let stored = try #require(try PMTilesArchive(path: path).tile(z: 0, x: 0, y: 0))
        #expect(GzipInflater.isGzip(stored))
        #expect(try GzipInflater.decompress(stored) == store.tiles["0/0/0"])
    }
}
