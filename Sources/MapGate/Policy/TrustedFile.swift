import Foundation

/// The ownership rule of files only an administrator may write (the managed policy), in the
/// manner of ssh's `StrictModes` and sudo's checks of `sudoers`.
///
/// The file and every folder above it must be owned by root and writable by nobody else, so that
/// no other user can change or replace what it says. A folder writable by others is accepted only
/// when it is sticky (`/tmp`): nobody else can then rename or delete what is in it. A symlink is
/// followed, and what it leads to is held to the same rule.
public enum TrustedFile {
    public struct Violation: Error, CustomStringConvertible, Sendable, Equatable {
        public let path: String
        public let reason: String
        public var description: String {
            "\(path) \(reason); the policy and every folder above it must be owned by root and writable by nobody else"
        }
    }

    /// Throws a ``Violation`` naming the first path that breaks the rule.
    public static func check(_ path: String) throws {
        guard let resolved = realpath(path, nil) else {
            throw Violation(path: path, reason: "cannot be resolved (\(String(cString: strerror(errno))))")
        }
        let real = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(real, &info) == 0 else { throw Violation(path: real, reason: "cannot be read") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw Violation(path: real, reason: "is not a regular file") }
        try checkOwnership(real, info, isFolder: false)
        var folder = (real as NSString).deletingLastPathComponent
        while true {
            guard stat(folder, &info) == 0 else { throw Violation(path: folder, reason: "cannot be read") }
            try checkOwnership(folder, info, isFolder: true)
            if folder == "/" || folder.isEmpty { break }
            folder = (folder as NSString).deletingLastPathComponent
        }
    }

    private static func checkOwnership(_ path: String, _ info: stat, isFolder: Bool) throws {
        guard info.st_uid == 0 else {
            throw Violation(path: path, reason: "is owned by uid \(info.st_uid), not root")
        }
        let mode = info.st_mode & 0o7777
        let sticky = isFolder && mode & S_ISVTX != 0
        if mode & S_IWOTH != 0, !sticky {
            throw Violation(path: path, reason: "is writable by everyone (mode \(String(mode, radix: 8)))")
        }
        if mode & S_IWGRP != 0, !sticky {
            throw Violation(path: path, reason: "is writable by group \(info.st_gid) (mode \(String(mode, radix: 8)))")
        }
    }
}
