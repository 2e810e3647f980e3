import FoundationEssentials
import CLinux
import MapGate

#if canImport(Glibc)
import Glibc

private typealias L = Localization
#endif

/// Where the user asked output to go (`-o FILE`), looked at before anything is written, so that a
/// mistake is reported before the command does its job (and before a gate use is counted).
///
/// mapgate writes *into* what the user named, never over it:
/// - a regular file, or a path that does not exist yet, is replaced atomically (a temporary file
///   in the same folder, fsync, `rename`), keeping an existing file's permissions;
/// - a character device (`/dev/null`, a terminal) or a FIFO is written through: opened and
///   written, never replaced, so running as root cannot turn `/dev/null` into a regular file;
/// - `-` is standard output; so is a path that resolves to one of this process's open files
///   (`/dev/stdout`, `/proc/self/fd/1`), which is written through (appending, as the shell
///   opened it);
/// - a symlink is followed: what it points to is what is written;
/// - a directory, a block device (a disk) or a socket is an error naming the path.
public struct OutputDestination: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Standard output. `explicit` when the user asked for it with `-`.
        case standardOutput(explicit: Bool)
        /// A regular file at `path` (symlinks resolved), or a new one: replaced atomically.
        case replace(path: String)
        /// A device, FIFO or open file of this process: opened and written through.
        case writeThrough(path: String, append: Bool)

        /// Whether it is ``replace(path:)``.
        public var isReplace: Bool {
            if case .replace = self { return true }
            return false
        }
    }

    public let argument: String?
    public let kind: Kind

    /// Looks at `argument` (nil when no `-o` was given, `-` for stdout). Throws an
    /// ``OutputError`` for a directory, a block device, a socket or a missing folder, and, without
    /// `-o`, when standard output is a terminal and the data is binary.
    public static func resolve(_ argument: String?, binary: Bool = true, stdoutIsTerminal: Bool = isatty(STDOUT_FILENO) == 1) throws
        -> OutputDestination
    {
        // `/dev/stdout` and its other names are the same output (found by an attack: `-o
        // /dev/stdout >&-` wrote into the /dev/null put in its place, and the use was counted).
        if argument == nil || argument == "-" || argument.map(isStandardOutput) == true, StandardStreams.isOutputClosed {
            throw OutputError(path: Self.standardOutputName, reason: L.localized("it was closed when mapgate started"), kind: .io)
        }
        guard let argument else {
            if binary, stdoutIsTerminal {
                throw OutputError(
                    path: Self.standardOutputName,
                    reason: L.localized("it is a terminal; refusing to write binary tile data to it: use -o FILE or redirect (-o - writes it anyway)"),
                    kind: .usage)
            }
            return OutputDestination(argument: nil, kind: .standardOutput(explicit: false))
        }
        if argument == "-" { return OutputDestination(argument: argument, kind: .standardOutput(explicit: true)) }
        guard !argument.isEmpty else { throw OutputError(path: "''", reason: L.localized("it is not a file name"), kind: .usage) }

        var info = stat()
        if stat(argument, &info) != 0 {
            let code = errno
            var linkInfo = stat()
            if lstat(argument, &linkInfo) == 0, (linkInfo.st_mode & S_IFMT) == S_IFLNK {
                // A dangling symlink: follow it, creating the file it names.
                return OutputDestination(argument: argument, kind: .writeThrough(path: argument, append: false))
            }
            guard code == ENOENT else { throw OutputError(path: argument, reason: SystemErrorReason.text(code), kind: .io) }
            let folder = PathText.deletingLastComponent(argument)
            let parent = folder.isEmpty ? "." : folder
            var folderInfo = stat()
            guard stat(parent, &folderInfo) == 0, (folderInfo.st_mode & S_IFMT) == S_IFDIR else {
                throw OutputError(path: argument, reason: L.localized("the folder %1$s does not exist", "\(parent)"), kind: .io)
            }
            try requireWritable(folder: parent, for: argument)
            return OutputDestination(argument: argument, kind: .replace(path: argument))
        }
        let resolved = realpath(argument, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? argument
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            throw OutputError(path: argument, reason: L.localized("it is a directory; name a file in it"), kind: .usage)
        case S_IFBLK:
            throw OutputError(path: argument, reason: L.localized("it is a block device; mapgate does not write tiles onto disks"), kind: .usage)
        case S_IFSOCK:
            throw OutputError(path: argument, reason: L.localized("it is a socket"), kind: .usage)
        case S_IFCHR, S_IFIFO:
            try requireWritable(file: argument)
            return OutputDestination(argument: argument, kind: .writeThrough(path: argument, append: false))
        case S_IFREG where resolved.hasPrefix("/proc/"):
            // `/dev/stdout` redirected to a file: the shell owns it; write where it points.
            return OutputDestination(argument: argument, kind: .writeThrough(path: argument, append: true))
        case S_IFREG:
            // The file is replaced by a rename in its folder; a file the user may not write is
            // not theirs to replace either (as `cp` would refuse it).
            try requireWritable(file: resolved)
            let folder = PathText.deletingLastComponent(resolved)
            try requireWritable(folder: folder.isEmpty ? "/" : folder, for: argument)
            try requireReplaceable(argument, owner: info.st_uid, folder: folder.isEmpty ? "/" : folder)
            return OutputDestination(argument: argument, kind: .replace(path: resolved))
        default:
            throw OutputError(path: argument, reason: L.localized("it is not a regular file, a device or a FIFO"), kind: .usage)
        }
    }

    /// Refuses a file that would be replaced or made inside one of `folders` (mapgate's data
    /// directory and gate state): `-o` onto the installed region's own file, or a new name among
    /// the regions, would change what mapgate keeps behind its back. Symbolic links are followed,
    /// as the write would follow them. Checked before the gate counts a use.
    /// A dangling symbolic link is refused by the file it would create (`tile -o LINK` would make
    /// a new file among the regions through it); standard output, and a path that is one of this
    /// process's open files, are the shell's to point anywhere.
    public func refuse(inside folders: [String]) throws {
        let path: String
        switch kind {
        case .standardOutput, .writeThrough(_, append: true): return
        case .replace(let file), .writeThrough(let file, append: false): path = file
        }
        let target = Self.finalTarget(of: path)
        for kept in folders {
            guard let real = Self.realPath(kept) else { continue }
            if target == real || target.hasPrefix(real.hasSuffix("/") ? real : real + "/") {
                throw OutputError(
                    path: argument ?? path,
                    reason: L.localized("it is in mapgate's own folder %1$s, whose files mapgate alone writes: name a file elsewhere", "\(kept)"),
                    kind: .usage)
            }
        }
    }

    /// Where writing to `path` lands: its symbolic links followed, the last of them dangling or
    /// not (at most 40, as the kernel follows), in its folder's real path.
    static func finalTarget(of path: String) -> String {
        var current = path
        for _ in 0..<40 {
            guard let next = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { break }
            let folder = PathText.deletingLastComponent(current)
            current = next.hasPrefix("/") ? next : (folder.isEmpty ? next : folder + "/" + next)
        }
        let folder = PathText.deletingLastComponent(current)
        let parent = realPath(folder.isEmpty ? "." : folder) ?? folder
        return parent + "/" + PathText.lastComponent(current)
    }

    private static func realPath(_ path: String) -> String? {
        realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
    }

    /// How standard output is named in what mapgate says: "standard output", or, for a command of
    /// the system service, the file its caller opened and passed as it (`tile -o /dev/full`, an
    /// `export` to a FIFO: found by an attack, "cannot write to standard output" named neither).
    static var standardOutputName: String {
        if let name = getenv(SystemService.Settings.outputNameVariable), getenv(SystemService.Settings.callerProcessVariable) != nil {
            return String(cString: name)
        }
        return L.localized("standard output")
    }

    /// Whether `path` names this process's standard output itself: `/dev/stdout`, `/dev/fd/1`,
    /// `/proc/self/fd/1` or this process's own `/proc/PID/fd/1`.
    private static func isStandardOutput(_ path: String) -> Bool {
        ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/proc/\(getpid())/fd/1"].contains(PathText.standardized(path))
    }

    /// A folder this process may not create files in (permissions, a read-only file system) is
    /// an error now, before the command does its work.
    private static func requireWritable(folder: String, for path: String) throws {
        guard access(folder, W_OK | X_OK) == 0 else {
            throw OutputError(path: path, reason: L.localized("cannot create a file in %1$s: %2$s", "\(folder)", "\(lastError())"), kind: .io)
        }
    }

    /// In a sticky folder (`/tmp`), only the file's owner, the folder's owner or root may rename
    /// over a file, however writable it is: another user's file there is an error now (found by
    /// an attack: in system mode the service counted the use at the tile's first byte, and the
    /// user's process then could not put the file in place).
    private static func requireReplaceable(_ path: String, owner: uid_t, folder: String) throws {
        var folderInfo = stat()
        guard stat(folder, &folderInfo) == 0, folderInfo.st_mode & S_ISVTX != 0 else { return }
        let me = geteuid()
        guard me != 0, me != owner, me != folderInfo.st_uid else { return }
        throw OutputError(
            path: path, reason: L.localized("it is another user's file in %1$s, where only a file's owner may replace it: name a new file", folder), kind: .io)
    }

    private static func requireWritable(file: String) throws {
        guard access(file, W_OK) == 0 else { throw OutputError(path: file, reason: lastError(), kind: .io) }
    }

    /// The step that hands the bytes to the user, as the gate's use needs it
    /// (``GateAuthorization/deliver(_:)``): when it returns the use is kept, when it throws the
    /// use may be given back. Without a use: run the step.
    public typealias Delivery = (() throws -> Void) throws -> Void

    /// Writes `data` to the destination. A FIFO that no process reads yet is waited for, after
    /// `waiting` is told its path. `deliver` runs the one step after which the bytes are the
    /// user's, even if the write later fails:
    /// - standard output, a device, a FIFO: the write of the first byte (a reader that takes most
    ///   of a large tile, then closes its end or stops mapgate, has had it);
    /// - a regular file: linking the complete, fsynced file into place. Until then the bytes are
    ///   in an unnamed file (`O_TMPFILE`) that vanishes with the process: a folder made
    ///   unwritable meanwhile, or a signal, leaves nothing behind. Where the file system has no
    ///   unnamed files, a named temporary file is used, and one that cannot be removed after a
    ///   failure counts as delivered (its bytes are there to read).
    ///
    /// `willDeliver` is told just before the delivery step (the tests stop mapgate there).
    ///
    /// `stallLimit`: how long a reader may take nothing before the first byte, in seconds (nil:
    /// for ever); see ``writeAll(_:to:name:room:stallLimit:willDeliver:deliver:)``.
    public func write(
        _ data: Data, waiting: (String) -> Void = { _ in }, stallLimit: Double? = nil, willDeliver: () -> Void = {}, deliver: Delivery = { try $0() }
    ) throws {

        switch kind {
        case .standardOutput:
            try Self.writeAll(data, to: STDOUT_FILENO, name: Self.standardOutputName, stallLimit: stallLimit, willDeliver: willDeliver, deliver: deliver)
        case .writeThrough(let path, let append):
            let descriptor = try Self.openWriteThrough(path, append: append, waiting: waiting)
            defer { close(descriptor) }
            try Self.writeAll(data, to: descriptor, name: path, stallLimit: stallLimit, willDeliver: willDeliver, deliver: deliver)
        case .replace(let path):
            try Self.replaceAtomically(path, with: data, willDeliver: willDeliver, deliver: deliver)
        }
    }

    /// What the user is told while mapgate waits for a FIFO's reader.
    public static func waitingNote(_ path: String) -> String {
        L.localized("waiting for a process to read %1$s… (Ctrl-C to stop)", "\(path)")
    }

    /// Opens a written-through destination (a device, a FIFO, a dangling symbolic link's new
    /// file, an open file of this process) for blocking writes. Without waiting first: a FIFO with
    /// no reader answers ENXIO, and the user is told what mapgate waits for (`waiting`, with the
    /// path) before it blocks.
    public static func openWriteThrough(_ path: String, append: Bool, waiting: (String) -> Void) throws -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0)
        var descriptor = open(path, flags | O_NONBLOCK, 0o666)
        if descriptor < 0, errno == ENXIO {
            waiting(path)
            descriptor = open(path, flags, 0o666)
        }
        guard descriptor >= 0 else { throw OutputError(path: path, reason: "open: \(lastError())", kind: .io) }
        let status = fcntl(descriptor, F_GETFL)
        guard status >= 0, fcntl(descriptor, F_SETFL, status & ~O_NONBLOCK) == 0 else {
            let reason = "fcntl: \(lastError())"
            close(descriptor)
            throw OutputError(path: path, reason: reason, kind: .io)
        }
        return descriptor
    }

    /// Writes the bytes into an unnamed file in `path`'s folder, fsyncs it, then (as the
    /// delivery) links it in beside `path` and renames it over `path`. An existing file keeps its
    /// permission bits (and, when running as root, its owner).
    private static func replaceAtomically(_ path: String, with data: Data, willDeliver: () -> Void, deliver: Delivery) throws {
        let file = try TemporaryFile(beside: path)
        defer { close(file.descriptor) }
        do {
            try writeAll(data, to: file.descriptor, name: path, willDeliver: {}) { try $0() }
            guard fsync(file.descriptor) == 0 else { throw OutputError(path: path, reason: "fsync: \(lastError())", kind: .io) }
        } catch {
            file.discard()
            throw error
        }
        willDeliver()
        try deliver { try file.moveIntoPlace() }
    }

    /// A file being written for `path`, in its folder: unnamed (`O_TMPFILE`) where the file system
    /// allows, else a hidden named one; with an existing file's permission bits (and, when running
    /// as root, its owner), else the umask's. ``moveIntoPlace()`` renames it over `path`.
    struct TemporaryFile {
        let path: String
        let descriptor: Int32
        private let named: String?

        init(beside path: String) throws {
            self.path = path
            let folder = PathText.deletingLastComponent(path)
            let parent = folder.isEmpty ? "." : folder
            let name = PathText.lastComponent(path)
            let unnamed = open(parent, clinux_o_tmpfile() | O_WRONLY | O_CLOEXEC, 0o600)
            if unnamed >= 0 {
                descriptor = unnamed
                named = nil
            } else {
                // No O_TMPFILE here (FAT, some FUSE and network file systems): a named file.
                var template = Array((parent + "/.\(name).mapgate-XXXXXX").utf8CString)
                descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
                guard descriptor >= 0 else {
                    throw OutputError(path: path, reason: L.localized("creating a temporary file beside it: %1$s", "\(lastError())"), kind: .io)
                }
                named = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            var existing = stat()
            if stat(path, &existing) == 0 {
                fchmod(descriptor, existing.st_mode & 0o7777)
                if geteuid() == 0 { fchown(descriptor, existing.st_uid, existing.st_gid) }
            } else {
                let mask = umask(0)
                umask(mask)
                fchmod(descriptor, 0o666 & ~mask)
            }
        }

        /// Removes a named file (an unnamed one goes with its descriptor).
        func discard() {
            if let named { unlink(named) }
        }

        /// Gives the file its name: linked in beside `path` if unnamed, then renamed over it.
        func moveIntoPlace() throws {
            let temporary: String
            if let named {
                temporary = named
            } else {
                let folder = PathText.deletingLastComponent(path)
                temporary = try linkUnnamed(descriptor, beside: (folder.isEmpty ? "." : folder) + "/.\(PathText.lastComponent(path)).mapgate-", for: path)
            }
            guard rename(temporary, path) == 0 else {
                let failure = OutputError(path: path, reason: "rename: \(lastError())", kind: .io)
                // Removed: nothing of the tile is left, and the use may be given back. Not
                // removable (the folder was made read-only meanwhile): its bytes are there to
                // read, so the use is kept, and the error still said.
                guard unlink(temporary) == 0 else { throw DeliveredAnywayError(failure) }
                throw failure
            }
        }
    }

    /// Links the unnamed file `descriptor` into `prefix` + a random suffix (`linkat` through
    /// `/proc/self/fd`, which needs no privilege); returns the name.
    private static func linkUnnamed(_ descriptor: Int32, beside prefix: String, for path: String) throws -> String {
        for _ in 0..<16 {
            let name = prefix + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            if linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0 { return name }
            guard errno == EEXIST else { break }
        }
        throw OutputError(path: path, reason: "linkat: \(lastError())", kind: .io)
    }

    /// Writes all of `data`; the first byte is written alone, as the delivery, once a reader can
    /// take it. `room`: the bytes the whole output will take when more follows `data` (an
    /// archive written in parts), reserved first in a regular file. `stallLimit`: the seconds a
    /// reader may take nothing before that first byte; past them the write fails before the
    /// delivery, so the use is given back (the system service's commands: a reader that takes
    /// nothing, a full pipe, held a use of the machine's gate for as long as its user liked;
    /// found by an attack).
    static func writeAll(
        _ data: Data, to descriptor: Int32, name: String, room: Int? = nil, stallLimit: Double? = nil, willDeliver: () -> Void, deliver: Delivery
    ) throws {
        // Standard output redirected to a file on a full disk, or past the user's file size
        // limit, held a cut tile or archive and cost a use (found by an attack): in a regular
        // file the room is taken before the delivery, so that what cannot fit fails first.
        try reserveRoom(room ?? data.count, in: descriptor, name: name)
        try data.withUnsafeBytes { buffer in
            var offset = 0
            func writeSome(_ limit: Int) throws {
                while true {
                    let written = Glibc.write(descriptor, buffer.baseAddress! + offset, min(limit, buffer.count - offset))
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw OutputError(path: name, reason: lastError(), kind: .io)
                    }
                    offset += written
                    SignalRouter.outputWritten.add(written, ordering: .relaxed)
                    return
                }
            }
            if !buffer.isEmpty {
                // Waited for outside the delivery: until a reader can take a byte (a full pipe, a
                // stalled consumer) nothing has gone out, and a signal meanwhile gives the use back
                // at once instead of finding a delivery under way (which it counts as delivered).
                guard waitUntilWritable(descriptor, limit: stallLimit) else { throw stalled(name, limit: stallLimit ?? 0) }
                willDeliver()
                try deliver { try writeSome(1) }
            }
            let piece = Self.piece(for: descriptor)
            while offset < buffer.count { try writeSome(piece) }
        }
    }

    /// The most one `write` gives `descriptor` once the output is delivered: a pipe, a FIFO or a
    /// device is written 16 KiB at a time, so that a reader taking the bytes slowly is seen to
    /// take them (``SignalRouter/outputWritten``) while a signal waits for the rest (found by an
    /// attack: a 1 MiB write to a pipe returns only when a reader has taken nearly all of it, so
    /// a reader slower than 100 KB/s looked stalled, and one Ctrl-C cut its archive); a regular
    /// file all at once.
    static func piece(for descriptor: Int32) -> Int {
        var info = stat()
        return fstat(descriptor, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? Int.max : 16 << 10
    }

    /// Allocates `length` bytes where the next write to `descriptor` goes, when it is a regular
    /// file, so that the bytes cannot fail to fit once the first has gone out (as a file replaced
    /// atomically is written in full before its delivery). Throws, with the file as it was, when
    /// they do not fit (the disk or the user's quota full, the file size limit); a file system
    /// that cannot allocate ahead (`EOPNOTSUPP`: ext3, some network file systems) has its free
    /// space looked at instead (found by an attack: a cut tile and a use counted on ext3). The
    /// file's size is not changed (`FALLOC_FL_KEEP_SIZE`: a file opened to append, `>>`, still
    /// gets the bytes at its end), so the size limit, which such an allocation does not check, is
    /// checked here. `allocate`: `fallocate(2)` (tests stand in a file system without it).
    static func reserveRoom(
        _ length: Int, in descriptor: Int32, name: String,
        allocate: (Int32, off_t, off_t) -> Int32 = { clinux_fallocate_keeping_size($0, $1, $2) }
    ) throws {
        var status = stat()
        guard length > 0, fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return }
        let flags = fcntl(descriptor, F_GETFL)
        let start = flags >= 0 && flags & O_APPEND != 0 ? status.st_size : lseek(descriptor, 0, SEEK_CUR)
        guard start >= 0 else { return }
        if let limit = FileSizeLimit.bytes, UInt64(start) + UInt64(length) > limit {
            throw OutputError(path: name, reason: SystemErrorReason.text(EFBIG), kind: .io)
        }
        var result: Int32
        repeat { result = allocate(descriptor, start, off_t(length)) } while result != 0 && errno == EINTR
        guard result != 0 else { return }
        var error = errno
        if ![ENOSPC, EFBIG, EDQUOT].contains(error) {
            // No allocation ahead here: the free space, as this user may use it (root may use the
            // blocks kept for it), with a block per 1,024 for the file system's own records.
            var space = statvfs()
            guard fstatvfs(descriptor, &space) == 0, space.f_frsize > 0 else { return }
            let blocks = UInt64(geteuid() == 0 ? space.f_bfree : space.f_bavail)
            let needed = (UInt64(length) + UInt64(space.f_frsize) - 1) / UInt64(space.f_frsize)
            guard blocks < needed + needed / 1024 + 1 else { return }
            error = ENOSPC
        }
        // Blocks an allocation that failed part-way took past the end are given back.
        _ = ftruncate(descriptor, status.st_size)
        throw OutputError(path: name, reason: SystemErrorReason.text(error), kind: .io)
    }

    /// Waits, before a use is asked for, until standard output can take a byte, for at most
    /// `limit` seconds (the system service's commands: ``Context/outputStallLimit``): a reader
    /// that takes nothing never has a use reserved for it (found by an attack: a user who ran
    /// such a command again and again held the machine's last use, each run for the limit).
    public func requireReader(within limit: Double?) throws {
        guard case .standardOutput = kind else { return }
        try Self.requireReader(of: STDOUT_FILENO, name: Self.standardOutputName, within: limit)
    }

    /// The same for any descriptor (standard error, where the gate's question goes).
    static func requireReader(of descriptor: Int32, name: String, within limit: Double?) throws {
        guard let limit else { return }
        guard waitUntilWritable(descriptor, limit: limit) else { throw stalled(name, limit: limit) }
    }

    private static func stalled(_ name: String, limit: Double) -> OutputError {
        OutputError(
            path: name,
            reason: L.localized(
                "its reader took nothing for %1$s seconds: in system mode a command does not wait longer, as the use it holds is the machine's (nothing was counted)",
                "\(Int(limit))"),
            kind: .io)
    }

    /// Returns true once a write to `descriptor` would not block (at once for files and
    /// devices), or once it fails or is hung up, which the write then reports; false when
    /// `limit` seconds passed first.
    private static func waitUntilWritable(_ descriptor: Int32, limit: Double?) -> Bool {
        let deadline = limit.map { MonotonicClock.seconds + $0 }
        var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        while true {
            let left = deadline.map { max(0, $0 - MonotonicClock.seconds) }
            let result = poll(&entry, 1, left.map { Int32(min($0 * 1000, Double(Int32.max))) } ?? -1)
            if result > 0 { return true }
            if result == 0 { return false }
            if errno != EINTR { return true }
        }
    }

    private static func lastError() -> String { SystemErrorReason.text(errno) }
}

/// Output that cannot go where the user asked, with the path and the reason.
public struct OutputError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let path: String
    public let reason: String
    public let kind: FailureKind
    public var errorDescription: String? {
        // Standard output named by a word of the user's language, not a path: its own message,
        // without the spaces a path is set off by (found by a review: "標準出力 に書き込めません").
        if path == L.localized("standard output") { return L.localized("cannot write to standard output: %1$s", "\(reason)") }
        return L.localized("cannot write to %1$s: %2$s", "\(path)", "\(reason)")
    }
}
