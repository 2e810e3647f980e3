import FoundationEssentials
import Glibc

/// The accounts system mode names (``GateSettings/systemUser``, the administrators' group), by
/// name or number, as the machine's user database has them.
public enum SystemAccount {
    /// The uid of `user` (a name, or a number as is), nil when there is no such user.
    public static func uid(_ user: String) -> uid_t? {
        if let number = uid_t(user) { return number }
        guard let entry = getpwnam(user) else { return nil }
        return entry.pointee.pw_uid
    }

    /// The gid of `group` (a name, or a number as is), nil when there is no such group.
    public static func gid(_ group: String) -> gid_t? {
        if let number = gid_t(group) { return number }
        guard let entry = getgrnam(group) else { return nil }
        return entry.pointee.gr_gid
    }
}
