import FoundationEssentials
import MapGateBase

/// Limits on one tile, shared by what checks tiles (publish, sync) and what serves them.
public enum TileLimits {
    /// The most a gzip-compressed tile may inflate to: the server unpacks no more for a client
    /// that does not take gzip, and `publish` and `sync` refuse a tile whose gzip trailer says more.
    public static let maximumUnpackedSize = 16 << 20
}

/// Whether a gzip (or zlib) tile inflates past ``TileLimits/maximumUnpackedSize``: what `publish` and `sync`
/// check of every tile. Deflate packs at most 1,032 bytes into one, so a tile of at most
/// 16,256 bytes cannot (nothing is inflated); a larger one is inflated, counting and keeping
/// nothing, every gzip member of it, until it ends or passes the limit. Its trailer's size is
/// not taken at its word (found by an attack: a forged trailer, or a small last member after a
/// 200 MiB one, was published and installed).
public enum GzipBombCheck {
    /// Deflate's greatest ratio of unpacked to packed bytes.
    static let greatestRatio = 1032

    /// True when `bytes` is gzip that inflates to more than ``TileLimits/maximumUnpackedSize``
    /// bytes; false for anything else (bytes that only look like gzip, and fail, are no bomb).
    public static func inflatesPastLimit(_ bytes: UnsafeRawBufferPointer, limit: Int = TileLimits.maximumUnpackedSize) -> Bool {
        // zlib-wrapped deflate too: some older tools stored `pbf` tiles so, and the server unpacks them.
        let isZlib = GzipInflater.isZlib(bytes)
        guard bytes.count >= 6, GzipInflater.isGzip(bytes) || isZlib, bytes.count > limit / greatestRatio else { return false }
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
            return false
        } catch is PastLimit {
            return true
        } catch {
            return false
        }
    }
}
