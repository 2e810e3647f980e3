import FoundationEssentials
import Glibc
import CLinux

/// The PID namespace this process runs in, by the inode of `/proc/self/ns/pid` (a file of the
/// namespace file system): a process id means a process only within one namespace, and one of
/// another namespace looks ended from here (`unshare --pid`, a container, a sandbox). Nil where
/// the kernel does not tell it.
public enum PIDNamespace {
    public static let current: UInt64? = {
        let path = "/proc/self/ns/pid"
        var info = stat()
        guard stat(path, &info) == 0, clinux_filesystem_type(path) == UserNamespace.namespaceFileSystem else { return nil }
        return UInt64(info.st_ino)
    }()
}
