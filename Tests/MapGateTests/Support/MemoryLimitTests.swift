import Foundation
import MapGate
import TestSupport
import Testing

/// The memory the process may use, read from `/proc` and `/sys` as the kernel lays them out
/// (here made up in a folder): the machine's, or the least of its control groups' limits.
@Suite struct MemoryLimitTests {
    /// Writes `files` (path under the root: contents) and returns the root.
    static func tree(_ files: [String: String]) throws -> TemporaryDirectory {
        let root = try TemporaryDirectory()
        for (path, text) in files {
            let full = root.path + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        }
        return root
    }

    static let meminfo = "MemTotal:        2048000 kB\nMemFree:          100000 kB\n"

    @Test func theMachinesMemoryWithoutALimit() throws {
        let root = try Self.tree(["/proc/meminfo": Self.meminfo, "/proc/self/cgroup": "0::/user.slice/session-1.scope\n",
            "/sys/fs/cgroup/cgroup.controllers": "cpu memory\n", "/sys/fs/cgroup/user.slice/memory.max": "max\n"])
        #expect(MemoryLimit.current(root: root.path) == MemoryLimit(bytes: 2_048_000 * 1024, isControlGroup: false))
    }

    /// cgroup v2 (a systemd service's `MemoryMax=`): the least limit of the group and its parents.
    @Test func theLeastLimitOfTheGroupAndItsParents() throws {
        let root = try Self.tree([
            "/proc/meminfo": Self.meminfo, "/proc/self/cgroup": "0::/system.slice/mapgate.service\n",
            "/sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
            "/sys/fs/cgroup/system.slice/memory.max": "536870912\n",
            "/sys/fs/cgroup/system.slice/mapgate.service/memory.max": "max\n",
        ])
        #expect(MemoryLimit.current(root: root.path) == MemoryLimit(bytes: 512 << 20, isControlGroup: true))
    }

    /// cgroup v1 in a container whose namespace shows its own group as the root: the path in
    /// `/proc/self/cgroup` is not there under the mount, whose root holds the limit.
    @Test func aContainersLimitUnderCgroupV1() throws {
        let root = try Self.tree([
            "/proc/meminfo": Self.meminfo, "/proc/self/cgroup": "9:name=systemd:/\n4:memory:/process_api/0384a8c2\n3:cpuset:/\n",
            "/sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n",
        ])
        #expect(MemoryLimit.current(root: root.path) == MemoryLimit(bytes: 256 << 20, isControlGroup: true))
        // v1's "no limit" is 2^63 rounded down to a page: the machine's memory then.
        try Data("9223372036854771712\n".utf8).write(to: URL(fileURLWithPath: root.path + "/sys/fs/cgroup/memory/memory.limit_in_bytes"))
        #expect(MemoryLimit.current(root: root.path) == MemoryLimit(bytes: 2_048_000 * 1024, isControlGroup: false))
    }

    /// A limit above the machine's memory is no limit; nothing readable is nil.
    @Test func aLimitAboveTheMachinesIsNotOneAndNothingReadableIsNil() throws {
        let root = try Self.tree([
            "/proc/meminfo": Self.meminfo, "/proc/self/cgroup": "0::/a\n", "/sys/fs/cgroup/cgroup.controllers": "memory\n",
            "/sys/fs/cgroup/a/memory.max": "\(64 << 30)\n",
        ])
        #expect(MemoryLimit.current(root: root.path) == MemoryLimit(bytes: 2_048_000 * 1024, isControlGroup: false))
        let empty = try TemporaryDirectory()
        #expect(MemoryLimit.current(root: empty.path) == nil)
        #expect(MemoryLimit.current() != nil, "this machine's /proc/meminfo")
    }
}
