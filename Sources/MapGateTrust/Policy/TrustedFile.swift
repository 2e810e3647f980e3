import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The ownership rule of files only an administrator may write (the managed policy), in the
/// manner of ssh's `StrictModes` and sudo's checks of `sudoers`.
///
/// The file and every folder above it must be owned by root and writable by nobody else, so that
/// no other user can change or replace what it says. A folder writable by others is accepted only
/// when it is sticky (`/tmp`): nobody else can then rename or delete what is in it. A symlink is
/// followed (``read(_:)`` resolves it first), and what it leads to is held to the same rule.
///
/// The check and the read are one walk over open descriptors: each folder is opened relative to
/// the one above it without following links (`openat` with `O_NOFOLLOW`), checked with `fstat`,
/// and the file is read from the descriptor that was checked. Nothing can be swapped between the
/// check and the read.
public enum TrustedFile {
    public struct Violation: Error, CustomStringConvertible, Sendable, Equatable {
        public let path: String
        public let reason: String
        public var description: String {
            L.localized("%1$s %2$s; the policy and every folder above it must be owned by root and writable by nobody else", "\(path)", "\(reason)")
        }
    }

    /// The largest file read (a policy is a few hundred bytes).
    static let maximumSize = 1 << 20

    /// Checks the rule and reads the file through the same descriptors. Throws a ``Violation``
    /// naming the first path that breaks the rule.
    ///
    /// - Parameter afterResolving: runs once the path's links are resolved, before the walk
    ///   (tests put a swap of a link there).
    public static func read(_ path: String, afterResolving: () -> Void = {}) throws -> Data {
        guard let resolved = realpath(path, nil) else {
            throw Violation(path: path, reason: L.localized("cannot be resolved (%1$s)", "\(SystemErrorReason.text(errno))"))
        }
        let real = String(cString: resolved)
        free(resolved)
        afterResolving()
        let components = real.split(separator: "/").map(String.init)
        guard !components.isEmpty else { throw Violation(path: real, reason: L.localized("is not a regular file")) }
        var folder = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw Violation(path: "/", reason: L.localized("cannot be opened")) }
        defer { close(folder) }
        try checkOwnership("/", try status(folder, "/"), isFolder: true)
        var walked = ""
        for name in components.dropLast() {
            walked += "/" + name
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { throw Violation(path: walked, reason: L.localized("changed while it was read or cannot be opened (%1$s)", "\(SystemErrorReason.text(errno))")) }
            close(folder)
            folder = next
            try checkOwnership(walked, try status(folder, walked), isFolder: true)
        }
        let file = openat(folder, components[components.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { throw Violation(path: real, reason: L.localized("changed while it was read or cannot be opened (%1$s)", "\(SystemErrorReason.text(errno))")) }
        defer { close(file) }
        let info = try status(file, real)
        guard info.st_mode & S_IFMT == S_IFREG else { throw Violation(path: real, reason: L.localized("is not a regular file")) }
        try checkOwnership(real, info, isFolder: false)
        guard Int(info.st_size) <= maximumSize else { throw Violation(path: real, reason: L.localized("is larger than %1$s bytes", "\(maximumSize)")) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = Glibc.read(file, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw Violation(path: real, reason: L.localized("cannot be read (%1$s)", "\(SystemErrorReason.text(errno))")) }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= maximumSize else { throw Violation(path: real, reason: L.localized("is larger than %1$s bytes", "\(maximumSize)")) }
        }
        return data
    }

    private static func status(_ descriptor: Int32, _ path: String) throws -> stat {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Violation(path: path, reason: L.localized("cannot be read")) }
        return info
    }

    private static func checkOwnership(_ path: String, _ info: stat, isFolder: Bool) throws {
        guard info.st_uid == 0 else {
            throw Violation(path: path, reason: L.localized("is owned by uid %1$s, not root", "\(info.st_uid)"))
        }
        let mode = info.st_mode & 0o7777
        let sticky = isFolder && mode & S_ISVTX != 0
        if mode & S_IWOTH != 0, !sticky {
            throw Violation(path: path, reason: L.localized("is writable by everyone (mode %1$s)", "\(String(mode, radix: 8))"))
        }
        if mode & S_IWGRP != 0, !sticky {
            throw Violation(path: path, reason: L.localized("is writable by group %1$s (mode %2$s)", "\(info.st_gid)", "\(String(mode, radix: 8))"))
        }
    }
}
