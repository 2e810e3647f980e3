import FoundationEssentials
import MapGateBase

/// A PMTiles v3 archive opened for reading: its header, directories (root and leaves), metadata
/// and tiles, every part checked before it is used. A malformed archive throws ``PMTilesError``
/// with the reason (bad magic, version, a section or an entry past the end, overlapping offsets,
/// a directory loop or one nested too deep, a gzip bomb); brotli and zstd are refused with the
/// way out (mapgate reads gzip and uncompressed archives).
///
/// Not `Sendable`: it owns a file descriptor and a cache of leaf directories.
public final class PMTilesArchive: TileStore {
    public let path: String
    public let header: PMTilesHeader
    let file: PMTilesFileReader
    let root: PMTilesDirectory
    /// Leaf directories read by ``tile(z:x:y:)``, by offset (a few, cleared when full).
    private var leafCache: [UInt64: PMTilesDirectory] = [:]

    /// The largest directory or metadata, compressed or not, that is read (a gzip bomb stops here).
    public static let directoryLimit = 64 << 20
    public static let metadataLimit = 16 << 20
    /// Leaf directories below the root, at most (go-pmtiles stops at 3 as well).
    public static let maximumDepth = 3
    /// The most tiles an archive may address (runs expanded): 2^26, a whole planet to zoom 12
    /// (converting sorts them: 1 GiB at most; a small archive of long runs asks no more).
    public static let maximumAddressedTiles: UInt64 = 1 << 26

    public init(path: String) throws {
        self.path = path
        file = try PMTilesFileReader(path: path)
        guard file.size > 0 else { throw PMTilesError(path: path, reason: L.localized("not a PMTiles archive: the file is empty")) }
        header = try PMTilesHeader(bytes: try file.read(offset: 0, length: min(file.size, UInt64(PMTilesHeader.size))), path: path)
        try Self.check(header, fileSize: file.size, path: path)
        let what = L.localized("the root directory")
        root = try Self.decodeDirectory(
            try file.read(offset: header.rootOffset, length: header.rootLength), compression: header.internalCompression, what: what, path: path)
        try checkEntries(root, what: what)
    }

    func fail(_ reason: String) -> PMTilesError { PMTilesError(path: path, reason: reason) }

    /// What the tiles are, from the header; nil for an unknown type.
    public var format: TileFormat? { header.tileType.format }

    // MARK: - Checks

    /// The header's promises against the file: supported compressions, every section inside the
    /// file, after the header, and no two sections overlapping.
    static func check(_ header: PMTilesHeader, fileSize: UInt64, path: String) throws {
        func fail(_ reason: String) -> PMTilesError { PMTilesError(path: path, reason: reason) }
        for (compression, what) in [(header.internalCompression, L.localized("directories and metadata")), (header.tileCompression, L.localized("tiles"))] {
            switch compression {
            case .brotli, .zstd:
                throw fail(
                    L.localized("its %1$s are %2$s-compressed, which mapgate does not read (gzip or none only): rewrite it with pmtiles convert or go-pmtiles' default gzip", what, compression.name))
            case .unknown where what != L.localized("tiles"):
                throw fail(L.localized("its %1$s compression is unknown (0)", what))
            default: break
            }
        }
        let sections: [(name: String, offset: UInt64, length: UInt64)] = [
            (L.localized("root directory"), header.rootOffset, header.rootLength),
            (L.localized("metadata"), header.metadataOffset, header.metadataLength),
            (L.localized("leaf directories"), header.leafDirectoriesOffset, header.leafDirectoriesLength),
            (L.localized("tile data"), header.tileDataOffset, header.tileDataLength),
        ]
        guard header.rootLength > 0 else { throw fail(L.localized("its root directory is empty (length 0)")) }
        for section in sections {
            let (end, overflow) = section.offset.addingReportingOverflow(section.length)
            guard !overflow, end <= fileSize else {
                throw fail(L.localized("directory past the end: its %1$s (bytes %2$s–%3$s) lies past the end of the file (%4$s bytes)", section.name, "\(section.offset)", "\(section.offset &+ section.length)", "\(fileSize)"))
            }
            guard section.length == 0 || section.offset >= UInt64(PMTilesHeader.size) else {
                throw fail(L.localized("overlapping offsets: its %1$s starts at %2$s, inside the 127-byte header", section.name, "\(section.offset)"))
            }
        }
        let placed = sections.filter { $0.length > 0 }.sorted { $0.offset < $1.offset }
        for (first, second) in zip(placed, placed.dropFirst()) where second.offset < first.offset + first.length {
            throw fail(L.localized("overlapping offsets: its %1$s and %2$s overlap (bytes %3$s–%4$s and %5$s–%6$s)", first.name, second.name, "\(first.offset)", "\(first.offset + first.length)", "\(second.offset)", "\(second.offset + second.length)"))
        }
        guard header.rootLength <= UInt64(directoryLimit) else {
            throw fail(L.localized("its root directory is %1$s bytes, over the %2$s bytes mapgate reads", "\(header.rootLength)", "\(directoryLimit)"))
        }
        guard header.metadataLength <= UInt64(metadataLimit) else {
            throw fail(L.localized("its metadata is %1$s bytes, over the %2$s bytes mapgate reads", "\(header.metadataLength)", "\(metadataLimit)"))
        }
    }

    /// Decompresses and decodes one directory; `what` names it in errors.
    static func decodeDirectory(_ bytes: Data, compression: PMTilesHeader.Compression, what: String, path: String) throws -> PMTilesDirectory {
        let plain = try decompress(bytes, compression: compression, limit: directoryLimit, what: what, path: path)
        do {
            return try PMTilesDirectory(decoding: plain)
        } catch {
            throw PMTilesError(path: path, reason: L.localized("%1$s is not a valid directory: %2$s", what, error.reason))
        }
    }

    /// Internal compression undone, up to `limit` bytes: more is a gzip bomb, refused.
    static func decompress(_ bytes: Data, compression: PMTilesHeader.Compression, limit: Int, what: String, path: String) throws -> Data {
        switch compression {
        case .none, .unknown:
            return bytes
        case .gzip:
            do {
                return try GzipInflater.decompress(bytes, maximumSize: limit)
            } catch let error as GzipError where error.isOverLimit {
                throw PMTilesError(path: path, reason: L.localized("gzip bomb: %1$s unpacks to more than %2$s bytes (%3$s bytes packed)", what, "\(limit)", "\(bytes.count)"))
            } catch {
                throw PMTilesError(path: path, reason: L.localized("%1$s cannot be unpacked: %2$s", what, errorMessage(error)))
            }
        case .brotli, .zstd:
            throw PMTilesError(path: path, reason: L.localized("%1$s is %2$s-compressed, which mapgate does not read", what, compression.name))
        }
    }

    /// The entries of one directory against the sections they point into.
    func checkEntries(_ directory: PMTilesDirectory, what: String) throws {
        for entry in directory.entries {
            let limit = entry.isLeaf ? header.leafDirectoriesLength : header.tileDataLength
            let (end, overflow) = entry.offset.addingReportingOverflow(UInt64(entry.length))
            guard !overflow, end <= limit else {
                let section = entry.isLeaf ? L.localized("leaf directories") : L.localized("tile data")
                throw fail(L.localized("directory past the end: %1$s points at bytes %2$s–%3$s of its %4$s, which are %5$s bytes long", what, "\(entry.offset)", "\(entry.offset &+ UInt64(entry.length))", section, "\(limit)"))
            }
            // The run's last id, in arithmetic that cannot overflow (an id near 2^64 is no tile).
            let (last, pastLast) = entry.tileID.addingReportingOverflow(UInt64(max(entry.runLength, 1)) - 1)
            guard entry.isLeaf || (!pastLast && PMTilesTileID.coordinate(of: last) != nil) else {
                let named = pastLast ? "\(entry.tileID) + \(entry.runLength) - 1" : "\(last)"
                throw fail(L.localized("%1$s names tile id %2$s, beyond zoom %3$s", what, named, "\(TileCoordinate.maximumZoom)"))
            }
            guard entry.isLeaf || entry.length > 0 else {
                throw fail(L.localized("%1$s has an entry of length 0 (tile id %2$s)", what, "\(entry.tileID)"))
            }
        }
    }

    /// The leaf directory an entry points at.
    func leaf(_ entry: PMTilesDirectory.Entry) throws -> PMTilesDirectory {
        let what = L.localized("the leaf directory at offset %1$s", "\(entry.offset)")
        let bytes = try file.read(offset: header.leafDirectoriesOffset + entry.offset, length: UInt64(entry.length))
        let directory = try Self.decodeDirectory(bytes, compression: header.internalCompression, what: what, path: path)
        try checkEntries(directory, what: what)
        if let first = directory.entries.first, first.tileID < entry.tileID {
            throw fail(L.localized("%1$s starts at tile id %2$s, before the %3$s its entry says", what, "\(first.tileID)", "\(entry.tileID)"))
        }
        return directory
    }

    // MARK: - Tiles

    /// The tile at XYZ `z/x/y` exactly as stored (compressed as the header's tile compression
    /// says), or nil when the archive has none there.
    public func tile(z: Int, x: Int, y: Int) throws -> Data? {
        guard let id = PMTilesTileID.id(z: z, x: x, y: y) else { return nil }
        var directory = root
        for _ in 0...Self.maximumDepth {
            guard let entry = directory.entry(covering: id) else { return nil }
            if !entry.isLeaf {
                guard id < entry.tileID + UInt64(entry.runLength) else { return nil }
                return try file.read(offset: header.tileDataOffset + entry.offset, length: UInt64(entry.length))
            }
            if let cached = leafCache[entry.offset] {
                directory = cached
            } else {
                directory = try leaf(entry)
                if leafCache.count >= 64 { leafCache.removeAll(keepingCapacity: true) }
                leafCache[entry.offset] = directory
            }
        }
        throw fail(L.localized("directory loop: its leaf directories nest deeper than %1$s levels", "\(Self.maximumDepth)"))
    }

    /// Every run of tiles, in increasing tile id order, after every check: each leaf directory
    /// reached once and at most ``maximumDepth`` deep, tile ids increasing across directories, no
    /// two contents overlapping unless they are the same bytes (deduplicated tiles), at most
    /// ``maximumAddressedTiles`` tiles.
    public func tileEntries() throws -> [PMTilesDirectory.Entry] {
        var runs: [PMTilesDirectory.Entry] = []
        var visited: Set<UInt64> = []
        var addressed: UInt64 = 0
        func walk(_ directory: PMTilesDirectory, depth: Int) throws {
            for entry in directory.entries {
                if entry.isLeaf {
                    guard depth < Self.maximumDepth else {
                        throw fail(L.localized("directory loop: its leaf directories nest deeper than %1$s levels", "\(Self.maximumDepth)"))
                    }
                    guard visited.insert(entry.offset).inserted else {
                        throw fail(L.localized("directory loop: the leaf directory at offset %1$s is reached twice", "\(entry.offset)"))
                    }
                    try walk(try leaf(entry), depth: depth + 1)
                    continue
                }
                if let last = runs.last, entry.tileID < last.tileID + UInt64(last.runLength) {
                    throw fail(L.localized("its tile ids go backwards or repeat: tile id %1$s comes after the run %2$s–%3$s", "\(entry.tileID)", "\(last.tileID)", "\(last.tileID + UInt64(last.runLength) - 1)"))
                }
                addressed += UInt64(entry.runLength)
                guard addressed <= Self.maximumAddressedTiles else {
                    throw fail(L.localized("it addresses more than %1$s tiles, more than mapgate converts", "\(Self.maximumAddressedTiles)"))
                }
                runs.append(entry)
            }
        }
        try walk(root, depth: 0)
        // Contents sorted by offset: each starts at or after the end of the one before, unless
        // it is the very same bytes (a deduplicated tile).
        var contents = runs.map { (offset: $0.offset, end: $0.offset + UInt64($0.length)) }
        contents.sort { ($0.offset, $0.end) < ($1.offset, $1.end) }
        var previous: (offset: UInt64, end: UInt64)?
        for content in contents {
            if let last = previous {
                if content == last { continue }
                if content.offset < last.end {
                    throw fail(L.localized("overlapping offsets: tile contents at bytes %1$s–%2$s and %3$s–%4$s of the tile data overlap", "\(last.offset)", "\(last.end)", "\(content.offset)", "\(content.end)"))
                }
            }
            previous = content
        }
        return runs
    }

    /// Every tile as (z, x, y in XYZ, bytes as stored), in (zoom, column, TMS row) order.
    public func forEachTile(_ body: (Int, Int, Int, Data) throws -> Void) throws {
        var lastBase: UnsafeRawPointer?
        var lastData = Data()
        try forEachTileBytes { z, x, y, bytes in
            // A deduplicated tile's bytes are handed over as one Data, not copied again.
            if bytes.baseAddress != lastBase || lastData.count != bytes.count {
                lastData = Data(bytes)
                lastBase = bytes.baseAddress
            }
            try body(z, x, y, lastData)
        }
    }

    /// Every tile as (z, x, y in XYZ, bytes as stored), in (zoom, column, TMS row) order, the
    /// bytes valid only during the call to `body`: read straight from the archive mapped into
    /// memory (no system call nor copy per tile; the tiles of a clustered archive are read ahead
    /// by the kernel in large sequential chunks), or with one `pread` per run when it cannot be
    /// mapped. What ``MBTilesWriter`` converts an archive with.
    public func forEachTileBytes(_ body: (Int, Int, Int, UnsafeRawBufferPointer) throws -> Void) throws {
        let runs = try tileEntries()
        var places: [Place] = []
        places.reserveCapacity(runs.reduce(0) { $0 + Int($1.runLength) })
        for (index, run) in runs.enumerated() {
            for id in run.tileID..<(run.tileID + UInt64(run.runLength)) {
                guard let tile = PMTilesTileID.coordinate(of: id) else { continue }
                places.append(Place(z: UInt8(tile.z), x: UInt32(tile.x), row: UInt32(tile.tmsRow), run: Int32(index)))
            }
        }
        places.sort { ($0.z, $0.x, $0.row) < ($1.z, $1.x, $1.row) }
        // Every run lies inside the tile data section (tileEntries checked it), and the section
        // inside the file (checked when opened).
        if let mapped = file.mapped() {
            let tileData = UnsafeRawBufferPointer(rebasing: mapped[Int(header.tileDataOffset)..<Int(header.tileDataOffset + header.tileDataLength)])
            for place in places {
                let run = runs[Int(place.run)]
                let start = Int(run.offset)
                let bytes = UnsafeRawBufferPointer(rebasing: tileData[start..<(start + Int(run.length))])
                let (z, x, row) = (Int(place.z), Int(place.x), Int(place.row))
                try body(z, x, TileCoordinate.flippedRow(row, zoom: z), bytes)
            }
            return
        }
        var lastRun: Int32 = -1
        var lastData = Data()
        for place in places {
            if place.run != lastRun {
                let run = runs[Int(place.run)]
                lastData = try file.read(offset: header.tileDataOffset + run.offset, length: UInt64(run.length))
                lastRun = place.run
            }
            let (z, x, row) = (Int(place.z), Int(place.x), Int(place.row))
            try lastData.withUnsafeBytes { try body(z, x, TileCoordinate.flippedRow(row, zoom: z), $0) }
        }
    }

    /// One addressed tile while sorting: its MBTiles address and the run that holds its bytes.
    private struct Place {
        var z: UInt8
        var x: UInt32
        var row: UInt32
        var run: Int32
    }
}
