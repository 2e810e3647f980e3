import FoundationEssentials
import Glibc
import MapGateBase

/// Writes any ``TileStore`` as a PMTiles v3 archive, as go-pmtiles and the reference writer do:
/// clustered (tile contents in tile id order), each distinct tile stored once (runs of equal tiles
/// in one entry), gzip-compressed directories and metadata, leaf directories once the root would
/// not fit in the first 16 KiB. Tiles keep their bytes: MVT stays gzip (a raw protobuf tile is
/// gzip-compressed, as `pmtiles convert` does), images as they are; an empty tile is left out.
///
/// The archive goes to `sink` strictly in order (header, root, metadata, leaves, tile data), so a
/// pipe can take it; the tiles wait in a scratch file (unlinked at once) in `scratchDirectory`.
public enum PMTilesWriter {
    /// What was written.
    public struct Summary: Sendable, Equatable {
        public var addressedTiles: Int
        public var tileEntries: Int
        public var tileContents: Int
        public var leafDirectories: Int
        public var bytes: UInt64
    }

    /// The largest root directory, so that the header and the root fit in the first 16 KiB.
    static let rootBudget = PMTilesHeader.rootLimit - PMTilesHeader.size

    /// Writes `store` with `metadata` (MBTiles rows) and `format` to `sink`; errors name `path`
    /// (the archive being written). `announcing` is told the archive's size in bytes before its
    /// first byte goes to `sink`.
    @discardableResult
    public static func write(
        _ store: any TileStore, metadata: [String: String], format: TileFormat, scratchDirectory: String, path: String,
        announcing: (UInt64) throws -> Void = { _ in }, to sink: (Data) throws -> Void
    ) throws -> Summary {
        func fail(_ reason: String, kind: FailureKind = .badData) -> PMTilesError { PMTilesError(path: path, reason: reason, kind: kind) }
        let scratch = try ScratchFile(in: scratchDirectory, for: path)
        // One pass over the store in its order: each distinct content once into the scratch file.
        var contents: [(offset: UInt64, length: UInt32)] = []
        var byDigest: [Data: Int32] = [:]
        var records: [(id: UInt64, content: Int32)] = []
        var minZoom = Int.max
        var maxZoom = Int.min
        let hasher = try SHA256Hasher()
        try store.forEachTile { z, x, y, stored in
            guard let id = PMTilesTileID.id(z: z, x: x, y: y) else { return }
            // An empty tile is no tile (an entry of length 0 means nothing to a reader): left out
            // before a vector tile is gzipped, which would make it 20 bytes of nothing.
            guard !stored.isEmpty else { return }
            var data = stored
            if format == .pbf, !GzipInflater.isGzip(data), GzipInflater.isZlib(data) {
                // zlib (some older writers): an archive's tiles are gzip (its header says so, found
                // by an attack: the export was refused); unpacked, bounded, and gzipped.
                do {
                    data = try GzipDeflater.compress(GzipInflater.decompress(data, maximumSize: TileLimits.maximumUnpackedSize))
                } catch {
                    throw fail(L.localized("tile %1$s cannot be unpacked (zlib): %2$s", "\(z)/\(x)/\(y)", errorMessage(error)))
                }
            } else if format == .pbf, !GzipInflater.isGzip(data) {
                guard data.first == 0x1A else {
                    throw fail(L.localized("tile %1$s is neither gzip nor a protobuf (%2$s)", "\(z)/\(x)/\(y)", TileFormat.describe(data)))
                }
                data = try GzipDeflater.compress(data)
            }
            guard data.count <= Int(UInt32.max) else { throw fail(L.localized("tile %1$s is over 4 GiB", "\(z)/\(x)/\(y)")) }
            try hasher.update(data)
            let digest = Data(try hasher.finalizeHex().utf8)
            let content: Int32
            if let known = byDigest[digest] {
                content = known
            } else {
                content = Int32(contents.count)
                byDigest[digest] = content
                contents.append((try scratch.append(data), UInt32(data.count)))
            }
            records.append((id, content))
            minZoom = min(minZoom, z)
            maxZoom = max(maxZoom, z)
        }
        byDigest = [:]
        records.sort { $0.id < $1.id }
        // Contents laid out in the order their first tile comes (clustered); runs merged.
        var finalOffset = [UInt64](repeating: .max, count: contents.count)
        var order: [Int32] = []
        order.reserveCapacity(contents.count)
        var tileDataLength: UInt64 = 0
        var entries: [PMTilesDirectory.Entry] = []
        for record in records {
            let index = Int(record.content)
            if finalOffset[index] == .max {
                finalOffset[index] = tileDataLength
                tileDataLength += UInt64(contents[index].length)
                order.append(record.content)
            }
            let offset = finalOffset[index]
            if var last = entries.last, last.offset == offset, last.tileID + UInt64(last.runLength) == record.id, last.runLength < UInt32.max {
                last.runLength += 1
                entries[entries.count - 1] = last
            } else {
                entries.append(PMTilesDirectory.Entry(tileID: record.id, offset: offset, length: contents[index].length, runLength: 1))
            }
        }
        let (root, leaves, leafCount) = try directories(entries)
        let metadataBytes = try GzipDeflater.compress(try metadataJSON(metadata))
        var header = PMTilesHeader()
        header.rootOffset = UInt64(PMTilesHeader.size)
        header.rootLength = UInt64(root.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadataBytes.count)
        header.leafDirectoriesOffset = header.metadataOffset + header.metadataLength
        header.leafDirectoriesLength = UInt64(leaves.count)
        header.tileDataOffset = header.leafDirectoriesOffset + header.leafDirectoriesLength
        header.tileDataLength = tileDataLength
        header.addressedTilesCount = UInt64(records.count)
        header.tileEntriesCount = UInt64(entries.count)
        header.tileContentsCount = UInt64(contents.count)
        header.isClustered = true
        header.internalCompression = .gzip
        header.tileCompression = format == .pbf ? .gzip : .none
        header.tileType = PMTilesHeader.TileType(format: format)
        header.minZoom = UInt8(clamping: records.isEmpty ? 0 : minZoom)
        header.maxZoom = UInt8(clamping: records.isEmpty ? 0 : maxZoom)
        let bounds = metadata["bounds"].flatMap(MBTilesFile.parseBounds) ?? [-180, -85.0511287, 180, 85.0511287]
        func e7(_ degrees: Double) -> Int32 { Int32((degrees * 10_000_000).rounded()) }
        // Bounds across the antimeridian as their band of latitudes, as TileJSON has them: a
        // PMTiles client builds its TileJSON from the header (found by an attack: the header
        // kept min_lon 170 and max_lon -170 after TileJSON stopped wrapping).
        let unwrapped = TileJSON.unwrappedBounds(bounds)
        header.minLongitudeE7 = e7(unwrapped[0])
        header.minLatitudeE7 = e7(unwrapped[1])
        header.maxLongitudeE7 = e7(unwrapped[2])
        header.maxLatitudeE7 = e7(unwrapped[3])
        // The metadata's zoom rounded and held to the tiles' zooms, as TileJSON's (found by an
        // attack: 22 of a region of zooms 0 to 6 was written, and PMTiles viewers opened there).
        let zooms = Int(header.minZoom)...Int(header.maxZoom)
        if let center = MBTilesFile.center(metadata["center"], within: bounds, zoom: zooms) {
            header.centerLongitudeE7 = e7(center[0])
            header.centerLatitudeE7 = e7(center[1])
            header.centerZoom = UInt8(clamping: Int(center[2]))
        } else {
            let middle = MBTilesFile.middle(of: bounds)
            header.centerLongitudeE7 = e7(middle.longitude)
            header.centerLatitudeE7 = e7(middle.latitude)
            header.centerZoom = header.minZoom
        }
        try announcing(header.tileDataOffset + tileDataLength)
        try sink(header.bytes + root + metadataBytes + leaves)
        // The tile data, in one buffered sequential stream.
        var buffer = Data()
        buffer.reserveCapacity(1 << 20)
        for index in order {
            let content = contents[Int(index)]
            buffer.append(try scratch.read(offset: content.offset, length: Int(content.length)))
            if buffer.count >= 1 << 20 {
                try sink(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty { try sink(buffer) }
        return Summary(
            addressedTiles: records.count, tileEntries: entries.count, tileContents: contents.count, leafDirectories: leafCount,
            bytes: header.tileDataOffset + tileDataLength)
    }

    /// The root directory and the leaf directories, gzip-compressed: everything in the root when
    /// it fits the budget, else leaves of 4,096 entries (doubled until the root fits).
    static func directories(_ entries: [PMTilesDirectory.Entry]) throws -> (root: Data, leaves: Data, count: Int) {
        let whole = try GzipDeflater.compress(PMTilesDirectory(entries: entries).encoded)
        if whole.count <= rootBudget { return (whole, Data(), 0) }
        var leafSize = 4096
        while true {
            var rootEntries: [PMTilesDirectory.Entry] = []
            var leaves = Data()
            var start = 0
            while start < entries.count {
                let slice = Array(entries[start..<min(start + leafSize, entries.count)])
                let bytes = try GzipDeflater.compress(PMTilesDirectory(entries: slice).encoded)
                rootEntries.append(PMTilesDirectory.Entry(tileID: slice[0].tileID, offset: UInt64(leaves.count), length: UInt32(bytes.count), runLength: 0))
                leaves.append(bytes)
                start += leafSize
            }
            let root = try GzipDeflater.compress(PMTilesDirectory(entries: rootEntries).encoded)
            if root.count <= rootBudget { return (root, leaves, rootEntries.count) }
            leafSize *= 2
        }
    }

    /// MBTiles metadata as PMTiles metadata JSON: each row as text, except `json`, whose fields
    /// (`vector_layers`, `tilestats`) go to the top level, as go-pmtiles and `pmtiles convert` do.
    /// Keys sorted: the same region gives the same bytes.
    static func metadataJSON(_ metadata: [String: String]) throws -> Data {
        var object: [String: JSONValue] = [:]
        for (name, value) in metadata where name != "json" && name != "scheme" { object[name] = .string(value) }
        if let text = metadata["json"], let fields = (try? JSONValue(parsing: Data(text.utf8)))?.objectValue {
            for (name, value) in fields where object[name] == nil { object[name] = value }
        }
        return try JSONValue.object(object).encoded([.sortedKeys])
    }

    /// The tiles' scratch file: made in a folder, unlinked at once, read back at offsets.
    final class ScratchFile {
        private let descriptor: Int32
        private var length: UInt64 = 0
        private let path: String
        /// Where it is (`$TMPDIR`): a full disk there is named, not the destination's.
        private let folder: String

        init(in folder: String, for path: String) throws {
            self.path = path
            self.folder = folder
            var template = Array((folder + "/mapgate-export-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else {
                throw PMTilesError(path: path, reason: L.localized("cannot make a scratch file in %1$s: %2$s", folder, SystemErrorReason.text(errno)), kind: .io)
            }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            descriptor = fd
        }

        deinit {
            close(descriptor)
        }

        /// Appends `data`; returns its offset.
        func append(_ data: Data) throws -> UInt64 {
            let offset = length
            try data.withUnsafeBytes { buffer in
                var done = 0
                while done < buffer.count {
                    let count = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else {
                        throw PMTilesError(path: path, reason: L.localized("cannot write its scratch file in %1$s: %2$s", folder, SystemErrorReason.text(errno)), kind: .io)
                    }
                    done += count
                }
            }
            length += UInt64(data.count)
            return offset
        }

        func read(offset: UInt64, length: Int) throws -> Data {
            switch PositionalRead.read(descriptor, offset: offset, length: length) {
            case .success(let data): return data
            case .failure(let failure):
                throw PMTilesError(path: path, reason: L.localized("cannot read its scratch file: %1$s", failure.reason), kind: .io)
            }
        }
    }
}
