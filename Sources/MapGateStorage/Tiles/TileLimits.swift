import FoundationEssentials
import MapGateBase

/// Limits on one tile, shared by what checks tiles (publish, sync) and what serves them.
public enum TileLimits {
    /// The most a gzip-compressed tile may inflate to: the server unpacks no more for a client
    /// that does not take gzip, and `publish` and `sync` refuse a tile whose gzip trailer says more.
    public static let maximumUnpackedSize = 16 << 20
}

/// Whether a gzip (or zlib) tile inflates past ``TileLimits/maximumUnpackedSize`` (and, looked
/// into whole, whether it inflates at all).
///
/// - ``Depth/whole`` (what `publish` checks of every tile it packs: its inputs come from other
///   writers): deflate packs at most 1,032 bytes into one, so a tile of at most 16,256 bytes
///   cannot (nothing is inflated); a larger one is inflated, counting and keeping nothing, every
///   gzip member of it, until it ends or passes the limit. Its trailer's size is not taken at its
///   word (found by an attack: a forged trailer, or a small last member after a 200 MiB one, was
///   published).
/// - ``Depth/trailer`` (what `sync` checks: the tiles of a package the publisher signed, which
///   `publish` checked whole): only a tile whose gzip trailer claims more than the limit is
///   inflated (bounded) to be sure. Inflating every large tile doubled the sync of a vector
///   region (1.75 s against 3.55 s for 290 MB of tiles of 146 KB); what a server unpacks for a
///   client is bounded by the limit whatever the trailer says.
public enum GzipBombCheck {
    public enum Depth: Sendable {
        case whole, trailer
    }

    /// Deflate's greatest ratio of unpacked to packed bytes.
    static let greatestRatio = 1032

    /// What a look into a compressed tile found.
    public enum Finding: Sendable, Equatable {
        /// Not compressed, within the limit, or not looked into.
        case fine
        /// It inflates past the limit: a gzip bomb.
        case pastLimit
        /// It does not inflate (``Depth/whole`` only): the reason. A tile whose first member is
        /// broken hides whatever follows it from this check (found by an attack: a member with a
        /// bad CRC before a 200 MiB one was published), and no client can read it.
        case corrupt(String)
    }

    /// What `bytes` (a tile) is, as far as `depth` looks: gzip (or zlib) that inflates to more
    /// than `limit` bytes, or, looked into whole, compressed data that does not inflate.
    public static func inspect(_ bytes: UnsafeRawBufferPointer, depth: Depth, limit: Int = TileLimits.maximumUnpackedSize) -> Finding {
        // zlib-wrapped deflate too: some older tools stored `pbf` tiles so, and the server unpacks them.
        let isGzip = GzipInflater.isGzip(bytes)
        let isZlib = !isGzip && GzipInflater.isZlib(bytes)
        guard bytes.count >= 6, isGzip || isZlib, bytes.count > limit / greatestRatio else { return .fine }
        if case .trailer = depth {
            // RFC 1952 §2.3.1: ISIZE, the input's length modulo 2³². zlib's format has none.
            guard isGzip, bytes.count >= 18 else { return .fine }
            let end = bytes.count
            let declared = Int(bytes[end - 4]) | Int(bytes[end - 3]) << 8 | Int(bytes[end - 2]) << 16 | Int(bytes[end - 1]) << 24
            guard declared > limit else { return .fine }
        }
        struct PastLimit: Error {}
        do {
            let inflater = try GzipInflater(zlib: isZlib)
            var produced = 0
            let count = { (output: UnsafeRawBufferPointer) in
                produced += output.count
                if produced > limit { throw PastLimit() }
            }
            try inflater.inflate(bytes, sink: count)
            try inflater.finish(sink: count)
            return .fine
        } catch is PastLimit {
            return .pastLimit
        } catch {
            if case .whole = depth { return .corrupt(errorMessage(error)) }
            return .fine
        }
    }
}
