import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Whether this process runs in the machine's own (initial) user namespace.
///
/// Any user can make a user namespace of their own (`unshare -r`, a rootless container) and be
/// "root" in it, owning every file they put there: `/etc/mapgate/policy.json`, `/etc/hosts`, the CA
/// store. Files, DNS and TLS trust are then theirs, so the gate takes a store answer obtained there
/// as able to make it only stricter (``GatePolicy/record(_:trustedTime:at:into:tightenOnly:)``).
///
/// The kernel tells it: the user namespace is a file of the namespace file system (nsfs) whose
/// inode is `PROC_USER_INIT_INO` in the initial namespace only. It is asked of the kernel itself
/// where it can be (Linux 6.11 and later: ``namespaceInode(_:)``), else read at
/// `/proc/self/ns/user`, which a user can mount over in a namespace of their own (found by an
/// attack: a bind mount of the initial namespace's file there made mapgate take itself for
/// outside any namespace). When neither tells, the answer is "not initial": the gate then fails
/// towards stricter, never looser.
public enum UserNamespace {
    /// `PROC_USER_INIT_INO` (include/linux/proc_ns.h).
    static let initialInode: UInt64 = 0xEFFF_FFFD
    /// `NSFS_MAGIC` (include/uapi/linux/magic.h).
    static let namespaceFileSystem = 0x6E73_6673
    /// `PIDFD_GET_USER_NAMESPACE` and `PIDFD_GET_PID_NAMESPACE` (include/uapi/linux/pidfd.h).
    static let userRequest: UInt32 = 0xFF09
    static let pidRequest: UInt32 = 0xFF05

    /// Whether the kernel itself tells the namespace (``namespaceInode(_:)``), not only `/proc`.
    public static var kernelTells: Bool { namespaceInode(userRequest) != nil }

    public static var isInitial: Bool {
        (namespaceInode(userRequest) ?? procInode("user")) == initialInode
    }

    /// The inode of one of this process's namespaces as the kernel gives it through a pidfd of
    /// itself, or nil where the kernel has no such request (before Linux 6.11).
    static func namespaceInode(_ request: UInt32) -> UInt64? {
        let descriptor = clinux_own_namespace(request)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, clinux_descriptor_filesystem_type(descriptor) == namespaceFileSystem else { return nil }
        return UInt64(info.st_ino)
    }

    /// The inode of `/proc/self/ns/NAME` when it is an nsfs file, else nil.
    static func procInode(_ name: String) -> UInt64? {
        let path = "/proc/self/ns/" + name
        var info = stat()
        guard stat(path, &info) == 0, clinux_filesystem_type(path) == namespaceFileSystem else { return nil }
        return UInt64(info.st_ino)
    }
}
