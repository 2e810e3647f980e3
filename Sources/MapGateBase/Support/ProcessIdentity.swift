import FoundationEssentials
import Glibc

/// One process as the kernel tells it apart from every other, across time: its pid, when it
/// started (clock ticks after boot, `/proc/PID/stat`'s 22nd field) and the boot it runs in. A pid
/// used again later belongs to a process that started later; a new boot ends every process.
///
/// The gate keeps the identity of each run holding a reserved use (``GateRecord``'s
/// reservations), so that the next run gives back the use of a run that died before it delivered
/// anything (SIGKILL, the OOM killer, a power cut).
public struct ProcessIdentity: Codable, Equatable, Sendable {
    public var pid: Int32
    public var start: UInt64
    public var boot: String

    public init(pid: Int32, start: UInt64, boot: String) {
        self.pid = pid
        self.start = start
        self.boot = boot
    }

    /// This process, or nil where `/proc` does not tell it.
    public static let current: ProcessIdentity? = {
        guard let boot = BootReading.current()?.id, case .found(let status) = look(at: getpid()), !status.isEnded else { return nil }
        return ProcessIdentity(pid: getpid(), start: status.start, boot: boot)
    }()

    /// Whether the process still runs. Only a clear answer ends it: another boot, no such pid,
    /// the pid now another process's (a later start), or a process that ended and waits for its
    /// parent (a zombie). When `/proc` cannot tell, it still runs.
    public var isRunning: Bool {
        guard let boot = BootReading.current()?.id else { return true }
        if boot != self.boot { return false }
        switch Self.look(at: pid) {
        case .found(let status): return status.start == start && !status.isEnded
        case .gone: return false
        case .unknown: return true
        }
    }

    /// Whether the process is stopped (Ctrl-Z, SIGSTOP, a debugger's stop: `T` or `t`): it does
    /// nothing until someone continues it, which may be never.
    public var isStopped: Bool {
        guard BootReading.current()?.id == boot, case .found(let status) = Self.look(at: pid), status.start == start else { return false }
        return status.isStopped
    }

    /// Whether the process `pid` is stopped now (false when `/proc` cannot tell).
    public static func isStopped(pid: Int32) -> Bool {
        guard case .found(let status) = look(at: pid) else { return false }
        return status.isStopped
    }

    private struct Status {
        var state: UInt8
        var start: UInt64
        var isStopped: Bool { state == UInt8(ascii: "T") || state == UInt8(ascii: "t") }
        /// A zombie (`Z`) or dead (`X`, `x`) process.
        var isEnded: Bool { state == UInt8(ascii: "Z") || state == UInt8(ascii: "X") || state == UInt8(ascii: "x") }
    }

    private enum Look {
        case found(Status)
        /// No process has the pid.
        case gone
        /// `/proc` could not tell (not mounted, not readable, a format not understood).
        case unknown
    }

    /// The state and start time in `/proc/PID/stat`.
    private static func look(at pid: Int32) -> Look {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT || errno == ESRCH ? .gone : .unknown }
        let file = UnixFile(fileDescriptor: descriptor, closeOnDealloc: true)
        guard let data = try? file.read(upToCount: 4096) else { return .unknown }
        // The command name is in parentheses and may hold anything, parentheses included: the
        // fields are counted from the last ')'. Field 3 (the state) is the first after it, field 22
        // (the start time) the twentieth.
        guard let close = data.lastIndex(of: UInt8(ascii: ")")) else { return .unknown }
        let fields = data[data.index(after: close)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19, let state = fields[0].first, let start = UInt64(String(decoding: fields[19], as: UTF8.self)) else {
            return .unknown
        }
        return .found(Status(state: state, start: start))
    }
}
