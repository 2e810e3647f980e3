import Foundation
import MapGate
import TestSupport
import Testing

/// The PMTiles v3 reader (issue 39): tile ids, directories, the reference fixtures against the
/// reference reader, and every malformed archive refused with its reason.
@Suite struct PMTilesArchiveTests {
    let work: TemporaryDirectory

    init() throws {
        work = try TemporaryDirectory()
    }

    typealias Entry = PMTilesDirectory.Entry

    // MARK: - Tile ids and directories

    @Test func tileIDsFollowTheSpecification() throws {
        #expect(PMTilesTileID.id(z: 0, x: 0, y: 0) == 0)
        #expect(PMTilesTileID.id(z: 1, x: 0, y: 0) == 1)
        #expect(PMTilesTileID.id(z: 1, x: 0, y: 1) == 2)
        #expect(PMTilesTileID.id(z: 1, x: 1, y: 1) == 3)
        #expect(PMTilesTileID.id(z: 1, x: 1, y: 0) == 4)
        #expect(PMTilesTileID.id(z: 2, x: 0, y: 0) == 5)
        // The specification's own example.
        #expect(PMTilesTileID.id(z: 12, x: 3423, y: 1763) == 19_078_479)
        #expect(PMTilesTileID.id(z: 31, x: 0, y: 0) == nil)
        #expect(PMTilesTileID.id(z: 3, x: 8, y: 0) == nil)
        for z in 0...5 {
            var seen = Set<UInt64>()
            for x in 0..<(1 << z) {
                for y in 0..<(1 << z) {
                    let id = try #require(PMTilesTileID.id(z: z, x: x, y: y))
                    seen.insert(id)
                    #expect(PMTilesTileID.coordinate(of: id) == TileCoordinate(z: z, x: x, y: y))
                }
            }
            // Each zoom fills its own range of ids exactly.
            #expect(seen.count == 1 << (2 * z) && seen.min() == (UInt64(1) << (2 * UInt64(z)) - 1) / 3)
        }
        let deep = try #require(PMTilesTileID.id(z: 30, x: (1 << 30) - 1, y: 12345))
        #expect(PMTilesTileID.coordinate(of: deep) == TileCoordinate(z: 30, x: (1 << 30) - 1, y: 12345))
        #expect(PMTilesTileID.coordinate(of: UInt64.max) == nil)
    }

    @Test func tileIDsAgreeWithTheReference() throws {
        try #require(PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps")
        let samples = [(3, 5, 2), (7, 100, 27), (12, 3423, 1763), (15, 20000, 1), (20, 1 << 19, (1 << 20) - 1)]
        let script = "import sys; from pmtiles.tile import zxy_to_tileid\nfor a in sys.argv[1:]:\n z, x, y = map(int, a.split('/'))\n print(zxy_to_tileid(z, x, y))"
        let result = try runProcess("/usr/bin/python3", ["-c", script] + samples.map { "\($0.0)/\($0.1)/\($0.2)" }, environment: ["PYTHONPATH": PMTilesReference.pythonPath])
        #expect(result.stdout.split(separator: "\n").map { UInt64($0) } == samples.map { PMTilesTileID.id(z: $0.0, x: $0.1, y: $0.2) })
    }

    @Test func directoriesRoundTripWithRunsAndContiguousOffsets() throws {
        let entries = [
            Entry(tileID: 0, offset: 0, length: 10, runLength: 1),
            Entry(tileID: 1, offset: 10, length: 300, runLength: 70_000),
            Entry(tileID: 70_001, offset: 0, length: 10, runLength: 1),
            Entry(tileID: 1 << 40, offset: 1 << 35, length: UInt32.max, runLength: 1),
            Entry(tileID: (1 << 40) + 5, offset: 0, length: 17, runLength: 0),
        ]
        let bytes = PMTilesDirectory(entries: entries).encoded
        #expect(try PMTilesDirectory(decoding: bytes).entries == entries)
        #expect(try PMTilesDirectory(decoding: PMTilesDirectory(entries: []).encoded).entries.isEmpty)
        // Offset 0 ("right after the previous") costs one byte.
        #expect(bytes.count <= 40)
    }

    @Test(arguments: [
        ([UInt8]([]), "ends inside a number"),
        ([5, 1], "claims 5 entries"),
        ([1, 0, 0, 0, 0x80], "ends inside a number"),
        ([1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1, 1, 1], "longer than 64 bits"),
        ([2, 5, 0, 1, 1, 1, 1, 1, 1], "do not increase"),
        ([1, 0, 1, 1, 0], "first entry has no offset"),
        ([1, 0, 1, 1, 1, 9], "follow its last entry"),
    ])
    func malformedDirectoriesAreRefused(_ bytes: [UInt8], _ reason: String) throws {
        #expect {
            _ = try PMTilesDirectory(decoding: Data(bytes))
        } throws: { error in
            (error as? PMTilesDirectory.FormatError)?.reason.contains(reason) == true
        }
    }

    // MARK: - The reference fixtures

    @Test(arguments: [
        ("stamen_toner-raster-z3.pmtiles", TileFormat.png, 85),
        ("usgs-mt-whitney-8-15-webp-512.pmtiles", TileFormat.webp, nil),
        ("js-test-test_fixture_1.pmtiles", TileFormat.pbf, 1),
        ("js-test-test_fixture_2.pmtiles", TileFormat.pbf, 1),
    ])
    func theReferenceFixturesReadAsTheReferenceReadsThem(_ name: String, _ format: TileFormat, _ count: Int?) throws {
        try #require(PMTilesReference.isInstalled, "python pmtiles from scripts/install-deps")
        let path = try TestPaths.shared("pmtiles/" + name)
        let archive = try PMTilesArchive(path: path)
        #expect(archive.format == format)
        var tiles: [String: Data] = [:]
        var order: [(Int, Int, Int)] = []
        try archive.forEachTile { z, x, y, data in
            tiles["\(z)/\(x)/\(y)"] = data
            order.append((z, x, TileCoordinate.flippedRow(y, zoom: z)))
        }
        let reference = try PMTilesReference.tiles(path)
        #expect(tiles == reference, "\(name): \(tiles.count) tiles, the reference \(reference.count)")
        if let count { #expect(tiles.count == count) }
        #expect(zip(order, order.dropFirst()).allSatisfy { $0 < $1 }, "hash order: (zoom, column, TMS row)")
        for (address, data) in reference.prefix(50) {
            let parts = address.split(separator: "/").compactMap { Int($0) }
            #expect(try archive.tile(z: parts[0], x: parts[1], y: parts[2]) == data)
        }
        #expect(try archive.tile(z: 29, x: 0, y: 0) == nil)
        let metadata = try archive.metadata()
        #expect(metadata["format"] == format.rawValue && metadata["scheme"] == nil)
        if format == .pbf { #expect(metadata["json"]?.contains("vector_layers") == true, "\(metadata)") }
        // One archive and the MBTiles made from it hash alike (martin's agg_tiles_hash).
        let converted = work.file(name + ".mbtiles")
        try MBTilesWriter.write(archive, metadata: metadata, to: converted)
        let mbtiles = try MBTilesFile(path: converted)
        #expect(try mbtiles.contentHash() == archive.contentHash())
        #expect(try PublishingWorkspace.tiles(converted) == reference)
    }

    @Test func conversionIsDeterministic() throws {
        let archive = try PMTilesArchive(path: try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"))
        let one = work.file("one.mbtiles")
        let two = work.file("two.mbtiles")
        try MBTilesWriter.write(archive, metadata: try archive.metadata(), to: one)
        try MBTilesWriter.write(archive, metadata: try archive.metadata(), to: two)
        #expect(try Data(contentsOf: URL(fileURLWithPath: one)) == Data(contentsOf: URL(fileURLWithPath: two)))
    }

    /// The pass over every tile reads the archive mapped into memory (issue 39, item 5): its
    /// bytes, the tiles kept after the pass (and after the archive is gone), and the MBTiles made
    /// from it are what reading each tile on its own gives.
    @Test func theMappedPassReadsWhatEachTileReads() throws {
        var archive: PMTilesArchive? = try PMTilesArchive(path: try TestPaths.shared("pmtiles/stamen_toner-raster-z3.pmtiles"))
        var kept: [String: Data] = [:]
        var raw: [String: Data] = [:]
        try archive!.forEachTile { z, x, y, data in kept["\(z)/\(x)/\(y)"] = data }
        try archive!.forEachTileBytes { z, x, y, bytes in raw["\(z)/\(x)/\(y)"] = Data(bytes) }
        #expect(kept.count == 85 && raw == kept)
        for (address, data) in kept {
            let parts = address.split(separator: "/").compactMap { Int($0) }
            #expect(try archive!.tile(z: parts[0], x: parts[1], y: parts[2]) == data, "\(address)")
        }
        let converted = work.file("mapped.mbtiles")
        try MBTilesWriter.write(archive!, metadata: try archive!.metadata(), to: converted)
        archive = nil
        #expect(try PublishingWorkspace.tiles(converted) == kept)
    }

    // MARK: - Malformed archives

    /// An archive laid out as the reference writes it (header, root, metadata, leaves, tiles),
    /// then changed by `change`.
    func archive(
        root: [Entry], leaves: Data = Data(), tiles: Data = Data(repeating: 7, count: 64), metadata: Data = Data("{}".utf8),
        gzip: Bool = false, change: (inout PMTilesHeader) -> Void = { _ in }
    ) throws -> String {
        let rootBytes = gzip ? try GzipDeflater.compress(PMTilesDirectory(entries: root).encoded) : PMTilesDirectory(entries: root).encoded
        var header = PMTilesHeader()
        header.internalCompression = gzip ? .gzip : .none
        header.tileType = .png
        header.rootOffset = 127
        header.rootLength = UInt64(rootBytes.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadata.count)
        header.leafDirectoriesOffset = header.metadataOffset + header.metadataLength
        header.leafDirectoriesLength = UInt64(leaves.count)
        header.tileDataOffset = header.leafDirectoriesOffset + header.leafDirectoriesLength
        header.tileDataLength = UInt64(tiles.count)
        change(&header)
        let path = work.file("archive-\(UUID().uuidString).pmtiles")
        try (header.bytes + rootBytes + metadata + leaves + tiles).write(to: URL(fileURLWithPath: path))
        return path
    }

    func refusal(_ path: String, walking: Bool = true) -> String {
        do {
            let archive = try PMTilesArchive(path: path)
            if walking { try archive.forEachTile { _, _, _, _ in } }
            _ = try archive.metadata()
            return "accepted"
        } catch let error as PMTilesError {
            return error.reason
        } catch {
            return "not a PMTilesError: \(error)"
        }
    }

    @Test func aWellFormedHandMadeArchiveIsRead() throws {
        let path = try archive(root: [Entry(tileID: 0, offset: 0, length: 8, runLength: 1), Entry(tileID: 1, offset: 8, length: 8, runLength: 4)])
        var count = 0
        try PMTilesArchive(path: path).forEachTile { _, _, _, data in
            count += 1
            #expect(data == Data(repeating: 7, count: 8))
        }
        #expect(count == 5)
    }

    @Test func theReferenceFixturesOfBrokenFilesAreRefused() throws {
        #expect(refusal(try TestPaths.shared("pmtiles/js-test-empty.pmtiles")).contains("the file is empty"))
        #expect(refusal(try TestPaths.shared("pmtiles/js-test-invalid.pmtiles")).contains("bad magic"))
        #expect(refusal(try TestPaths.shared("pmtiles/js-test-invalid_v4.pmtiles")).contains("spec version 4"))
    }

    @Test func headersThatLieAreRefused() throws {
        let tile = [Entry(tileID: 0, offset: 0, length: 8, runLength: 1)]
        let bad = work.file("bad.pmtiles")
        try Data("MBTiles\u{3}".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(refusal(bad).contains("bad magic"))
        // An archive left gzipped, and an MBTiles file under a .pmtiles name, are said as such.
        try Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]).write(to: URL(fileURLWithPath: bad))
        #expect(refusal(bad).contains("gzip-compressed data, not a PMTiles archive: unpack it first (gunzip -c"))
        try Data("SQLite format 3\u{0}".utf8 + Data(count: 100)).write(to: URL(fileURLWithPath: bad))
        #expect(refusal(bad).contains("an SQLite (MBTiles) file, not a PMTiles archive"))
        try Data("PMTiles\u{3}abc".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(refusal(bad).contains("cut short"))
        #expect(refusal(try archive(root: tile) { $0.internalCompression = .brotli }).contains("brotli-compressed"))
        #expect(refusal(try archive(root: tile) { $0.tileCompression = .zstd }).contains("zstd-compressed"))
        #expect(refusal(try archive(root: tile) { $0.rootLength += 1000 }).contains("directory past the end"))
        #expect(refusal(try archive(root: tile) { $0.tileDataLength = UInt64.max }).contains("directory past the end"))
        #expect(refusal(try archive(root: tile) { $0.metadataOffset = 3 }).contains("inside the 127-byte header"))
        #expect(refusal(try archive(root: tile) { $0.metadataOffset = $0.rootOffset }).contains("overlapping offsets"))
        #expect(refusal(try archive(root: tile) { $0.rootLength = 0 }).contains("root directory is empty"))
        #expect(refusal(try archive(root: tile, metadata: Data("[1]".utf8))).contains("not a JSON object"))
    }

    @Test func entriesThatLieAreRefused() throws {
        #expect(refusal(try archive(root: [Entry(tileID: 0, offset: 60, length: 8, runLength: 1)])).contains("directory past the end"))
        #expect(
            refusal(try archive(root: [Entry(tileID: 0, offset: 0, length: 8, runLength: 1), Entry(tileID: 1, offset: 4, length: 8, runLength: 1)]))
                .contains("overlapping offsets"))
        #expect(refusal(try archive(root: [Entry(tileID: 0, offset: 0, length: 0, runLength: 1)])).contains("length 0"))
        let beyond = (UInt64(1) << 62) / 3 * 1 + 1
        #expect(refusal(try archive(root: [Entry(tileID: beyond, offset: 0, length: 8, runLength: 1)])).contains("beyond zoom 30"))
        // Ids whose run would end past 2^64 - 1 (found by an attack: an arithmetic overflow trap).
        for (id, run) in [(UInt64.max, UInt32(1)), (UInt64.max - 1, UInt32(5)), (UInt64.max - 3, UInt32.max)] {
            #expect(refusal(try archive(root: [Entry(tileID: id, offset: 0, length: 8, runLength: run)])).contains("beyond zoom 30"), "\(id) + \(run)")
        }
        // Runs that address far more tiles than any region.
        let runs = (0..<20).map { Entry(tileID: UInt64($0) << 32, offset: 0, length: 8, runLength: UInt32.max) }
        #expect(refusal(try archive(root: runs)).contains("more than"))
    }

    @Test func leafDirectoriesThatLoopOrNestTooDeepAreRefused() throws {
        // A leaf whose one entry points at itself: reached twice.
        let loop = PMTilesDirectory(entries: [Entry(tileID: 0, offset: 0, length: 0, runLength: 0)])
        var bytes = loop.encoded
        let selfPointing = PMTilesDirectory(entries: [Entry(tileID: 0, offset: 0, length: UInt32(bytes.count), runLength: 0)])
        bytes = selfPointing.encoded
        let path = try archive(root: [Entry(tileID: 0, offset: 0, length: UInt32(bytes.count), runLength: 0)], leaves: bytes)
        #expect(refusal(path).contains("directory loop"))
        // The same leaf asked for by a tile lookup ends at the depth limit.
        #expect(throws: PMTilesError.self) { try PMTilesArchive(path: path).tile(z: 0, x: 0, y: 0) }
        // Four distinct leaves, each pointing at the next: deeper than three. Laid out deepest
        // first, so each points back at the one before it.
        var leaves = PMTilesDirectory(entries: [Entry(tileID: 0, offset: 0, length: 8, runLength: 1)]).encoded
        var last = (offset: UInt64(0), length: UInt32(leaves.count))
        for _ in 0..<3 {
            let directory = PMTilesDirectory(entries: [Entry(tileID: 0, offset: last.offset, length: last.length, runLength: 0)]).encoded
            last = (UInt64(leaves.count), UInt32(directory.count))
            leaves.append(directory)
        }
        let deep = try archive(root: [Entry(tileID: 0, offset: last.offset, length: last.length, runLength: 0)], leaves: leaves)
        #expect(refusal(deep).contains("nest deeper than 3"), "\(refusal(deep))")
    }

    @Test func aGzipBombIsRefused() throws {
        // 80 MiB of zeros pack into about 80 KiB: a root directory that would unpack past the limit.
        let bomb = try GzipDeflater.compress(Data(count: 80 << 20))
        let path = work.file("bomb.pmtiles")
        var header = PMTilesHeader()
        header.internalCompression = .gzip
        header.rootOffset = 127
        header.rootLength = UInt64(bomb.count)
        header.tileDataOffset = 127 + UInt64(bomb.count)
        try (header.bytes + bomb).write(to: URL(fileURLWithPath: path))
        #expect(refusal(path).contains("gzip bomb"), "\(refusal(path))")
    }

    @Test func leafDirectoriesAreFollowed() throws {
        // Tiles 0…5 in two gzip leaves, the root pointing at both.
        let first = try GzipDeflater.compress(PMTilesDirectory(entries: [Entry(tileID: 0, offset: 0, length: 8, runLength: 3)]).encoded)
        let second = try GzipDeflater.compress(PMTilesDirectory(entries: [Entry(tileID: 3, offset: 8, length: 8, runLength: 3)]).encoded)
        let path = try archive(
            root: [Entry(tileID: 0, offset: 0, length: UInt32(first.count), runLength: 0), Entry(tileID: 3, offset: UInt64(first.count), length: UInt32(second.count), runLength: 0)],
            leaves: first + second, gzip: true)
        let archive = try PMTilesArchive(path: path)
        var count = 0
        try archive.forEachTile { _, _, _, _ in count += 1 }
        #expect(count == 6)
        #expect(try archive.tile(z: 1, x: 1, y: 0) != nil)
        let absent = try #require(PMTilesTileID.coordinate(of: 6))
        #expect(try archive.tile(z: absent.z, x: absent.x, y: absent.y) == nil)
    }
}
