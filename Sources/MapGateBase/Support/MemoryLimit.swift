import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The memory this process may use, as the kernel says: the least of the machine's memory
/// (`MemTotal` in `/proc/meminfo`) and the limits of the control groups it runs in (cgroup v2's
/// `memory.max`, v1's `memory.limit_in_bytes`, at every level from its own group up to the root
/// of the hierarchy it sees: a systemd unit's `MemoryMax=`, a container's `--memory`).
public struct MemoryLimit: Sendable, Equatable {
    public var bytes: Int64
    /// The limit is a control group's, not the machine's memory.
    public var isControlGroup: Bool

    public init(bytes: Int64, isControlGroup: Bool) {
        self.bytes = bytes
        self.isControlGroup = isControlGroup
    }

    /// The limit now, or nil when neither the machine's memory nor a limit can be read.
    ///
    /// - Parameter root: prefixed to `/proc` and `/sys` (the tests' made-up trees).
    public static func current(root: String = "") -> MemoryLimit? {
        var least = machineMemory(root: root).map { MemoryLimit(bytes: $0, isControlGroup: false) }
        for bytes in controlGroupLimits(root: root) where bytes < least?.bytes ?? .max {
            least = MemoryLimit(bytes: bytes, isControlGroup: true)
        }
        return least
    }

    /// `MemTotal`, in bytes.
    static func machineMemory(root: String) -> Int64? {
        guard let text = read(root + "/proc/meminfo") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("MemTotal:") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, let kibibytes = Int64(fields[1]), kibibytes > 0 else { return nil }
            return kibibytes.multipliedReportingOverflow(by: 1024).overflow ? nil : kibibytes * 1024
        }
        return nil
    }

    /// Every limit set on the groups this process is in, from its own up to the root of each
    /// hierarchy. A group's path as `/proc/self/cgroup` names it may not be there under the mount
    /// (a container's cgroup namespace shows its own group as the root): its levels that are
    /// missing are passed over, and the mount's root is read last.
    static func controlGroupLimits(root: String) -> [Int64] {
        guard let text = read(root + "/proc/self/cgroup") else { return [] }
        var limits: [Int64] = []
        for line in text.split(separator: "\n") {
            // id:controllers:path; the path may itself hold colons.
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[2].hasPrefix("/") else { continue }
            let mount: String
            let file: String
            if parts[0] == "0", parts[1].isEmpty {
                // v2: the unified hierarchy, at /sys/fs/cgroup (or /sys/fs/cgroup/unified beside v1's).
                guard let found = [root + "/sys/fs/cgroup", root + "/sys/fs/cgroup/unified"].first(where: { isFile($0 + "/cgroup.controllers") }) else { continue }
                (mount, file) = (found, "memory.max")
            } else if parts[1].split(separator: ",").contains("memory") {
                (mount, file) = (root + "/sys/fs/cgroup/memory", "memory.limit_in_bytes")
            } else {
                continue
            }
            var levels = parts[2].split(separator: "/").map(String.init)
            while true {
                let folder = levels.isEmpty ? mount : mount + "/" + levels.joined(separator: "/")
                if let value = read(folder + "/" + file).map({ $0.trimmingWhitespaceAndNewlines() }), let bytes = Int64(value),
                    bytes > 0, bytes < 1 << 62  // "max" (v2) and v1's page-rounded 2^63 mean none
                {
                    limits.append(bytes)
                }
                if levels.isEmpty { break }
                levels.removeLast()
            }
        }
        return limits
    }

    private static func read(_ path: String) -> String? {
        guard let file = UnixFile(forReadingAtPath: path), let data = try? file.read(upToCount: 64 << 10) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }
}
