import Foundation
import MapGate

/// Ports for servers a test names before they start (nginx's configuration, the machine's tile
/// port in a policy), let go until then.
public enum TestPorts {
    /// A port free now and outside the range the kernel hands out on its own
    /// (`ip_local_port_range`): a port from `bind(0)`, let go, was soon another test's, taken by
    /// a client's connection or a server on port 0 before the server it was meant for bound it
    /// (found in CI: the machine's tile server, "Address already in use", six suites at once).
    public static func free() throws -> UInt16 {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).compactMap { Int($0) } ?? []
        let below = min(range.first ?? 32_768, 32_768)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let port = UInt16(Int.random(in: 10_000..<below, using: &generator))
            if (try? HTTPListener(host: "127.0.0.1", port: port)) != nil { return port }
        }
        return try HTTPListener(host: "127.0.0.1", port: 0).port
    }
}
