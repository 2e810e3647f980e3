import Foundation
import MapGate

extension BackgroundProcess {
    /// The process as the gate's reservations name it (pid, start time from `/proc`, boot): a
    /// test plants another run's reservation with it.
    public func identity() throws -> ProcessIdentity {
        let stat = try String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8)
        guard let close = stat.lastIndex(of: ")"), let me = ProcessIdentity.current else { throw MissingFixture(path: "/proc/\(processIdentifier)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let start = UInt64(fields[19]) else { throw MissingFixture(path: "/proc/\(processIdentifier)/stat") }
        return ProcessIdentity(pid: processIdentifier, start: start, boot: me.boot)
    }
}

/// Whether `pid` is stopped (SIGSTOP: a `MAPGATE_FAULT_STOP_AT` hook): its state in /proc is `T`.
public func processIsStopped(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
    return stat[stat.index(close, offsetBy: 2)] == "T"
}
