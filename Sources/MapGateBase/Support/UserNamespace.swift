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
/// The kernel tells it: `/proc/self/ns/user` is a file of the namespace file system (nsfs) whose
/// inode is `PROC_USER_INIT_INO` in the initial namespace only. When that cannot be read (no
/// `/proc`), the answer is "not initial": the gate then fails towards stricter, never looser.
public enum UserNamespace {
    /// `PROC_USER_INIT_INO` (include/linux/proc_ns.h).
    static let initialInode: UInt64 = 0xEFFF_FFFD
    /// `NSFS_MAGIC` (include/uapi/linux/magic.h).
    static let namespaceFileSystem = 0x6E73_6673

    public static var isInitial: Bool {
        let path = "/proc/self/ns/user"
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return clinux_filesystem_type(path) == namespaceFileSystem && UInt64(info.st_ino) == initialInode
    }
}
