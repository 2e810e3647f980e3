import FoundationEssentials
import MapGateBase

/// One directory of a PMTiles v3 archive, uncompressed: its entries in increasing tile id order,
/// stored as varints column by column (tile id deltas, run lengths, lengths, offsets; an offset
/// of 0 after the first entry means "right after the previous entry", any other is offset + 1).
public struct PMTilesDirectory: Sendable, Equatable {
    /// A run of tiles (`runLength` ≥ 1: the tiles `tileID ..< tileID + runLength` share one
    /// content at `offset` in the tile data) or a leaf directory (`runLength` 0: at `offset` in
    /// the leaf directories, covering tile ids from `tileID`).
    public struct Entry: Sendable, Equatable {
        public var tileID: UInt64
        public var offset: UInt64
        public var length: UInt32
        public var runLength: UInt32

        public init(tileID: UInt64, offset: UInt64, length: UInt32, runLength: UInt32) {
            self.tileID = tileID
            self.offset = offset
            self.length = length
            self.runLength = runLength
        }

        public var isLeaf: Bool { runLength == 0 }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// Why bytes are not a directory (the caller names the archive and which directory).
    public struct FormatError: Error, Sendable, Equatable {
        public let reason: String
    }

    /// Decodes a directory; tile ids must increase strictly.
    public init(decoding data: Data) throws(FormatError) {
        var reader = VarintReader(bytes: [UInt8](data))
        let count = try reader.next()
        // Every entry takes at least four bytes: a count beyond that is a lie, not an allocation.
        guard count <= UInt64(reader.remaining / 4) else {
            throw FormatError(reason: L.localized("it claims %1$s entries in %2$s bytes", "\(count)", "\(data.count)"))
        }
        let n = Int(count)
        var entries = [Entry](repeating: Entry(tileID: 0, offset: 0, length: 0, runLength: 0), count: n)
        var last: UInt64 = 0
        for i in 0..<n {
            let delta = try reader.next()
            guard i == 0 || delta > 0 else { throw FormatError(reason: L.localized("its tile ids do not increase (entry %1$s)", "\(i)")) }
            let (sum, overflow) = last.addingReportingOverflow(delta)
            guard !overflow else { throw FormatError(reason: L.localized("a tile id is out of range (entry %1$s)", "\(i)")) }
            last = sum
            entries[i].tileID = sum
        }
        for i in 0..<n {
            let value = try reader.next()
            guard value <= UInt64(UInt32.max) else { throw FormatError(reason: L.localized("a run length is out of range (entry %1$s)", "\(i)")) }
            entries[i].runLength = UInt32(value)
        }
        for i in 0..<n {
            let value = try reader.next()
            guard value <= UInt64(UInt32.max) else { throw FormatError(reason: L.localized("a length is out of range (entry %1$s)", "\(i)")) }
            entries[i].length = UInt32(value)
        }
        for i in 0..<n {
            let value = try reader.next()
            if value == 0 {
                guard i > 0 else { throw FormatError(reason: L.localized("its first entry has no offset")) }
                let (sum, overflow) = entries[i - 1].offset.addingReportingOverflow(UInt64(entries[i - 1].length))
                guard !overflow else { throw FormatError(reason: L.localized("an offset is out of range (entry %1$s)", "\(i)")) }
                entries[i].offset = sum
            } else {
                entries[i].offset = value - 1
            }
        }
        guard reader.remaining == 0 else { throw FormatError(reason: L.localized("%1$s bytes follow its last entry", "\(reader.remaining)")) }
        self.entries = entries
    }

    /// The uncompressed bytes.
    public var encoded: Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 6 + 10)
        func put(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            bytes.append(UInt8(v))
        }
        put(UInt64(entries.count))
        var last: UInt64 = 0
        for entry in entries {
            put(entry.tileID - last)
            last = entry.tileID
        }
        for entry in entries { put(UInt64(entry.runLength)) }
        for entry in entries { put(UInt64(entry.length)) }
        for (i, entry) in entries.enumerated() {
            if i > 0, entry.offset == entries[i - 1].offset + UInt64(entries[i - 1].length) {
                put(0)
            } else {
                put(entry.offset + 1)
            }
        }
        return Data(bytes)
    }

    /// The entry whose tiles or leaf may hold `tileID`: the last one starting at or before it.
    public func entry(covering tileID: UInt64) -> Entry? {
        var low = 0
        var high = entries.count - 1
        var found: Int?
        while low <= high {
            let middle = (low + high) / 2
            if entries[middle].tileID <= tileID {
                found = middle
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return found.map { entries[$0] }
    }

    private struct VarintReader {
        let bytes: [UInt8]
        var position = 0
        var remaining: Int { bytes.count - position }

        mutating func next() throws(FormatError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard position < bytes.count else { throw FormatError(reason: L.localized("it ends inside a number")) }
                let byte = bytes[position]
                position += 1
                guard shift < 64, shift < 63 || byte & 0x7F <= 1 else { throw FormatError(reason: L.localized("a number is longer than 64 bits")) }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
    }
}
