import FoundationEssentials
import MapGateBase

/// Limits on one tile, shared by what checks tiles (publish, sync) and what serves them.
public enum TileLimits {
    /// The most a gzip-compressed tile may inflate to: the server unpacks no more for a client
    /// that does not take gzip, and `publish` and `sync` refuse a tile whose gzip trailer says more.
    public static let maximumUnpackedSize = 16 << 20
}

/// The size a gzip member says it inflates to: its trailer's ISIZE (RFC 1952 §2.3.1, the input's
/// length modulo 2³²). A cheap first look; what inflates a tile still bounds its output.
public enum GzipTrailer {
    /// The size `bytes` inflates to when it is gzip that inflates past
    /// ``TileLimits/maximumUnpackedSize``, else nil. Only a tile whose trailer claims more is
    /// inflated (bounded) to be sure: bytes that only look like gzip are not a bomb.
    public static func inflatedSizeOverLimit(of bytes: UnsafeRawBufferPointer) -> Int? {
        guard let declared = declaredSize(of: bytes), declared > TileLimits.maximumUnpackedSize else { return nil }
        do {
            _ = try GzipInflater.decompress(Data(bytes), maximumSize: TileLimits.maximumUnpackedSize)
            return nil
        } catch let error as GzipError where error.isOverLimit {
            return declared
        } catch {
            return nil
        }
    }

    /// nil when `bytes` is not gzip (no `1f 8b` magic) or too short to have a trailer.
    public static func declaredSize(of bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 18, bytes[0] == 0x1F, bytes[1] == 0x8B else { return nil }
        let end = bytes.count
        return Int(bytes[end - 4]) | Int(bytes[end - 3]) << 8 | Int(bytes[end - 2]) << 16 | Int(bytes[end - 1]) << 24
    }
}
