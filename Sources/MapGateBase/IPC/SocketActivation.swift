import FoundationEssentials
import Glibc

/// The listening sockets the service manager handed this process (socket activation, as
/// `sd_listen_fds_with_names(3)` reads them): `LISTEN_FDS` descriptors from 3 on, for the process
/// `LISTEN_PID`, named in order by `LISTEN_FDNAMES` (each socket unit's `FileDescriptorName=`).
/// System mode's service gets its own socket (`system`) and the machine's tile port (`tiles`).
public struct SocketActivation: Sendable {
    /// The first descriptor handed over.
    public static let firstDescriptor: Int32 = 3
    /// How many descriptors were handed over.
    public let count: Int
    /// Their names, in order (empty when the manager gave none).
    public let names: [String]

    /// Nil when this process was not started by socket activation.
    public init?(environment: [String: String]) {
        guard environment["LISTEN_PID"].flatMap(Int32.init) == getpid(),
            let count = environment["LISTEN_FDS"].flatMap(Int.init), (1...1024).contains(count)
        else { return nil }
        self.count = count
        // Every one close-on-exec, the ones not used too: no command the service starts keeps one.
        for descriptor in Self.firstDescriptor..<(Self.firstDescriptor + Int32(count)) { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        names = environment["LISTEN_FDNAMES"].map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
    }

    /// The descriptor named `name`, or nil.
    public func descriptor(named name: String) -> Int32? {
        guard let index = names.firstIndex(of: name), index < count else { return nil }
        return Self.firstDescriptor + Int32(index)
    }
}
