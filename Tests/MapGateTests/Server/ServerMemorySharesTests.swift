import Foundation
import MapGate
import Testing

/// A server's defaults shared out of the memory it may use (``MemoryLimit``).
@Suite struct ServerMemorySharesTests {
    /// An eighth of the memory for kept tiles, a quarter for unsent
    /// answers, a quarter for connections (9 KiB each), each at most its figure for 1 GiB or more.
    @Test func theServersSharesOfTheMemory() {
        let largest = ServerMemoryShares(tileCacheBytes: 128 << 20, unsentBodyBytes: 128 << 20, maxConnections: 10_000)
        #expect(ServerMemoryShares.largest == largest && ServerMemoryShares(for: nil) == largest)
        #expect(ServerMemoryShares(for: MemoryLimit(bytes: 24 << 30, isControlGroup: false)) == largest)
        #expect(ServerMemoryShares(for: MemoryLimit(bytes: 1 << 30, isControlGroup: false)) == largest)
        #expect(!ServerMemoryShares(for: MemoryLimit(bytes: 1 << 30, isControlGroup: false)).isReduced)
        let half = ServerMemoryShares(for: MemoryLimit(bytes: 512 << 20, isControlGroup: true))
        #expect(half == ServerMemoryShares(tileCacheBytes: 64 << 20, unsentBodyBytes: 128 << 20, maxConnections: 10_000) && half.isReduced)
        #expect(ServerMemoryShares(for: MemoryLimit(bytes: 256 << 20, isControlGroup: true))
            == ServerMemoryShares(tileCacheBytes: 32 << 20, unsentBodyBytes: 64 << 20, maxConnections: 7_281))
        #expect(ServerMemoryShares(for: MemoryLimit(bytes: 300_000_000, isControlGroup: true))
            == ServerMemoryShares(tileCacheBytes: 35 << 20, unsentBodyBytes: 71 << 20, maxConnections: 8_138))
        #expect(ServerMemoryShares(for: MemoryLimit(bytes: 7 << 20, isControlGroup: true))
            == ServerMemoryShares(tileCacheBytes: 0, unsentBodyBytes: 1 << 20, maxConnections: 199))
        #expect(ServerMemoryShares(for: MemoryLimit(bytes: 1 << 20, isControlGroup: true)).maxConnections == 64, "at least 64")
        #expect(TileResponseCache.defaultLimit == ServerMemoryShares(for: MemoryLimit.current()).tileCacheBytes)
        // Applied to a server's settings: the budget and the limit, nothing else.
        let applied = half.applied(to: HTTPServer.Settings())
        #expect(applied.maxUnsentBodyBytes == 128 << 20 && applied.maxConnections == 10_000 && applied.maxHeaderBytes == HTTPServer.Settings().maxHeaderBytes)
        let small = ServerMemoryShares(for: MemoryLimit(bytes: 256 << 20, isControlGroup: true)).applied(to: HTTPServer.Settings())
        #expect(small.maxUnsentBodyBytes == 64 << 20 && small.maxConnections == 7_281)
    }
}
