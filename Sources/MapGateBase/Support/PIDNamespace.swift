import FoundationEssentials

/// The PID namespace this process runs in, by its inode on the namespace file system: a process
/// id means a process only within one namespace, and one of another namespace looks ended from
/// here (`unshare --pid`, a container, a sandbox). Asked of the kernel where it can be, else read
/// at `/proc/self/ns/pid` (``UserNamespace``). Nil where neither tells.
public enum PIDNamespace {
    public static let current: UInt64? = UserNamespace.namespaceInode(UserNamespace.pidRequest) ?? UserNamespace.procInode("pid")
}
