import FoundationEssentials
import MapGateBase
import Synchronization

/// What `/metrics` reports, in Prometheus' text format: answers by route and status, body
/// bytes, a latency histogram, open connections, the gate's state and uses left.
public final class ServerMetrics: Sendable {
    public let connections = HTTPConnectionGauge()
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct Counts {
        var answers: [AnswerKey: Int] = [:]
        var bytes = 0
        var latency = [Int](repeating: 0, count: ServerMetrics.buckets.count + 1)
        var latencySum = 0.0
        var latencyCount = 0
    }

    /// A route and a status (0: refused by libmicrohttpd): a label is a literal, so the key is
    /// made without allocating.
    private struct AnswerKey: Hashable {
        var route: String
        var status: Int
        var statusText: String { status == 0 ? "refused" : String(status) }
    }

    private let counts = Locked(Counts())

    public init() {}

    /// Counts one answer (every answer the HTTP layer logs, rejections included).
    public func record(route: String, status: Int, bytes: Int, seconds: Double) {
        let bucket = Self.buckets.firstIndex { seconds <= $0 } ?? Self.buckets.count
        counts.withLock { counts in
            // 0: libmicrohttpd refused the request itself (a malformed or oversized head).
            counts.answers[AnswerKey(route: route, status: status), default: 0] += 1
            counts.bytes += bytes
            counts.latency[bucket] += 1
            counts.latencySum += seconds
            counts.latencyCount += 1
        }
    }

    /// The Prometheus text exposition (version 0.0.4).
    public func render(gate: GateWatch) -> String {
        let snapshot = counts.withLock { $0 }
        var lines: [String] = []
        lines.append("# HELP mapgate_http_requests_total Answers by route and status.")
        lines.append("# TYPE mapgate_http_requests_total counter")
        // In the order of "route\tstatus" as text, as before.
        for (key, count) in snapshot.answers.sorted(by: { "\($0.key.route)\t\($0.key.statusText)" < "\($1.key.route)\t\($1.key.statusText)" }) {
            lines.append("mapgate_http_requests_total{route=\"\(key.route)\",status=\"\(key.statusText)\"} \(count)")
        }
        lines.append("# HELP mapgate_http_response_bytes_total Body bytes answered.")
        lines.append("# TYPE mapgate_http_response_bytes_total counter")
        lines.append("mapgate_http_response_bytes_total \(snapshot.bytes)")
        lines.append("# HELP mapgate_http_request_duration_seconds Time to answer a request.")
        lines.append("# TYPE mapgate_http_request_duration_seconds histogram")
        var cumulative = 0
        for (index, bound) in Self.buckets.enumerated() {
            cumulative += snapshot.latency[index]
            lines.append("mapgate_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)")
        }
        lines.append("mapgate_http_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.latencyCount)")
        lines.append("mapgate_http_request_duration_seconds_sum \(snapshot.latencySum)")
        lines.append("mapgate_http_request_duration_seconds_count \(snapshot.latencyCount)")
        lines.append("# HELP mapgate_http_open_connections Connections open now.")
        lines.append("# TYPE mapgate_http_open_connections gauge")
        lines.append("mapgate_http_open_connections \(connections.count)")
        lines.append("# HELP mapgate_gate_state 1 for the gate's current state (open, closed, failing).")
        lines.append("# TYPE mapgate_gate_state gauge")
        let gateSnapshot = gate.snapshot
        for name in ["open", "closed", "failing"] {
            lines.append("mapgate_gate_state{state=\"\(name)\"} \(name == gateSnapshot.standing.name ? 1 : 0)")
        }
        if let left = gateSnapshot.usesLeft {
            lines.append("# HELP mapgate_gate_uses_left Prompted uses left before the gate closes.")
            lines.append("# TYPE mapgate_gate_uses_left gauge")
            lines.append("mapgate_gate_uses_left \(left)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
