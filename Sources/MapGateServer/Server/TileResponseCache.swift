import FoundationEssentials
import MapGateBase

/// Tile answers kept in memory, shared by every worker and connection: a tile of an installed
/// file never changes (an update renames another file in, with another identity), so its 200
/// answer — headers, ETag and body — is made once and sent again as it is
/// (``HTTPPreparedResponse``), without SQLite, a copy or headers made again.
///
/// Bounded: the bodies plus an estimate of each entry's own cost stay under `limit` bytes; past
/// it the oldest entries go first (first in, first out: no bookkeeping on a hit). An entry
/// belongs to the file it was read from: looked up for another file (the region was updated or
/// installed again) it is a miss, and ``removeAll()`` drops everything when the regions change.
/// Tiles over ``maximumTileSize`` are not kept.
public final class TileResponseCache: Sendable {
    public struct Key: Hashable, Sendable {
        public var region: String
        public var z: Int
        public var x: Int
        public var y: Int
        /// The answer sends the stored gzip bytes (`Content-Encoding: gzip`).
        public var isGzip: Bool

        public init(region: String, z: Int, x: Int, y: Int, isGzip: Bool) {
            self.region = region
            self.z = z
            self.x = x
            self.y = y
            self.isGzip = isGzip
        }
    }

    public struct Entry: Sendable {
        public let file: FileIdentity
        public let etag: String
        public let response: HTTPPreparedResponse
        /// What the entry counts against the limit.
        let cost: Int
    }

    /// A miss costs about twice a hit (SQLite, two copies, libmicrohttpd's response made and
    /// destroyed: docs/benchmarks.md), and a cache smaller than the tiles asked for at random
    /// gains little, so it is sized to hold the hot set of a large region, or all of a small one:
    /// 128 MiB where there is memory to spare, an eighth of the memory mapgate may use where there
    /// is less (``ServerMemoryShares``). Each kept byte takes about 1.3 bytes of RSS.
    public static let defaultLimit = ServerMemoryShares.current.tileCacheBytes

    /// Larger tiles are answered from the file each time.
    public static let maximumTileSize = 256 << 10
    /// libmicrohttpd's response and its headers, the entry and its key, roughly (measured: 1 KB).
    static let entryOverhead = 1024

    public let limit: Int

    private struct Store {
        var entries: [Key: Entry] = [:]
        /// Keys in the order they came in; `head` is the oldest one still queued.
        var order: [Key] = []
        var head = 0
        var bytes = 0
    }

    private let store = Locked(Store())

    /// - Parameter limit: bytes the entries may take; 0 keeps none.
    public init(limit: Int = TileResponseCache.defaultLimit) {
        self.limit = max(0, limit)
    }

    /// Bytes the entries take now (bodies plus their estimated overhead).
    public var bytes: Int { store.withLock { $0.bytes } }

    public var count: Int { store.withLock { $0.entries.count } }

    /// The answer kept for `key`, if it was read from `file`.
    public func entry(_ key: Key, file: FileIdentity) -> Entry? {
        guard limit > 0 else { return nil }
        return store.withLock { store in
            guard let entry = store.entries[key], entry.file == file else { return nil }
            return entry
        }
    }

    /// Keeps an answer (replacing one kept for the same key), dropping the oldest ones past the limit.
    public func insert(_ key: Key, file: FileIdentity, etag: String, response: HTTPPreparedResponse) {
        let cost = response.body.count + key.region.utf8.count + etag.utf8.count + Self.entryOverhead
        guard limit > 0, response.body.count <= Self.maximumTileSize, cost <= limit else { return }
        let entry = Entry(file: file, etag: etag, response: response, cost: cost)
        // Entries dropped here are released after the lock (their deinit frees libmicrohttpd's response).
        var dropped: [Entry] = []
        store.withLock { store in
            if let old = store.entries.updateValue(entry, forKey: key) {
                store.bytes -= old.cost
                dropped.append(old)
            } else {
                store.order.append(key)
            }
            store.bytes += cost
            while store.bytes > limit, store.head < store.order.count {
                let oldest = store.order[store.head]
                store.head += 1
                if let gone = store.entries.removeValue(forKey: oldest) {
                    store.bytes -= gone.cost
                    dropped.append(gone)
                }
            }
            // The queue's consumed front is cut off once it is half of it.
            if store.head > 1024, store.head * 2 > store.order.count {
                store.order.removeFirst(store.head)
                store.head = 0
            }
        }
        _ = dropped
    }

    /// Drops every entry (the installed regions changed).
    public func removeAll() {
        let old = store.withLock { store in
            defer { store = Store() }
            return store.entries
        }
        _ = old
    }
}
