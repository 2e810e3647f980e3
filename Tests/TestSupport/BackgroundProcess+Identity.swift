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
