import FoundationEssentials
import MapGateBase

/// How a tile server shares out the memory it may use (``MemoryLimit``: the machine's, or its
/// control group's, a service's `MemoryMax=` or a container's limit) where its options do not say:
/// an eighth for the tiles it keeps (``TileResponseCache``), a quarter for answers not yet taken
/// by their clients (``HTTPServer/Settings/maxUnsentBodyBytes``), a quarter for connections
/// (``HTTPServer/Settings/maxConnections``, at ``bytesPerConnection`` each), and the rest, about
/// 30 MiB, for the server itself. Each share is at most what it is on a machine of 1 GiB or more
/// (``largest``), so only a machine or group with less memory sees smaller figures.
///
/// Found by an attack (2026-12-06): in a group limited to 256 MiB a local client filled the cache,
/// held the unsent budget with slow readers and opened idle connections; the unscaled 128 MiB of
/// unsent answers and 10,000 connections (about 90 MB) came to more than the limit, and the
/// kernel killed the server, which a service manager started again, a use of the gate each time.
public struct ServerMemoryShares: Sendable, Equatable {
    public var tileCacheBytes: Int
    public var unsentBodyBytes: Int
    public var maxConnections: Int

    public init(tileCacheBytes: Int, unsentBodyBytes: Int, maxConnections: Int) {
        self.tileCacheBytes = tileCacheBytes
        self.unsentBodyBytes = unsentBodyBytes
        self.maxConnections = maxConnections
    }

    /// The shares with memory to spare: 128 MiB of tiles kept (martin keeps 512 MB), 128 MiB of
    /// answers not yet taken, 10,000 connections.
    public static let largest = ServerMemoryShares(tileCacheBytes: 128 << 20, unsentBodyBytes: 128 << 20, maxConnections: 10_000)

    /// What a connection may hold. On h2o (the default) an idle one holds about 1 KB, but one
    /// whose client sends a head and stops holds up to 8 KiB of it (the glue's limit), and its
    /// records. On libmicrohttpd an idle one holds its pool of
    /// ``HTTPServer/Settings/maxHeaderBytes``, which it zeroes after each request (so all of it is
    /// resident), and its records (measured: 8,753 bytes, docs/benchmarks.md).
    public static let bytesPerConnection = 9 << 10

    /// The fewest connections a server takes, however little memory there is.
    static let fewestConnections = 64

    /// The shares of `memory`; ``largest`` when it is not known.
    public init(for memory: MemoryLimit?) {
        guard let memory else {
            self = .largest
            return
        }
        let largest = Self.largest
        // Whole MiB, so that the figures said are round.
        func share(_ bytes: Int64, atMost most: Int) -> Int { Int(min(Int64(most), (bytes >> 20) << 20)) }
        tileCacheBytes = share(memory.bytes / 8, atMost: largest.tileCacheBytes)
        unsentBodyBytes = share(memory.bytes / 4, atMost: largest.unsentBodyBytes)
        maxConnections = Int(min(Int64(largest.maxConnections), max(Int64(Self.fewestConnections), memory.bytes / 4 / Int64(Self.bytesPerConnection))))
    }

    /// The memory this process may use, read once (nil when it cannot be read).
    public static let memory = MemoryLimit.current()

    /// This process's shares of ``memory``.
    public static let current = ServerMemoryShares(for: memory)

    /// Whether any share is below ``largest``.
    public var isReduced: Bool { self != Self.largest }

    /// `settings` with the unsent budget and the connection limit of these shares.
    public func applied(to settings: HTTPServer.Settings) -> HTTPServer.Settings {
        var settings = settings
        settings.maxUnsentBodyBytes = unsentBodyBytes
        settings.maxConnections = maxConnections
        return settings
    }
}
