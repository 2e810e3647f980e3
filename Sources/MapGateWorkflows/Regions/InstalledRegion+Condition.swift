import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage

/// The cheap identity of an installed region's file, recorded at install: size, modification
/// time and inode. A file that still has all three is taken to be the file installed; one that
/// does not is hashed (SHA-256) to tell a damaged file from a moved or restored one.
public struct RegionFileStamp: Sendable, Equatable, Codable {
    public var size: Int64
    /// Nanoseconds since 1970.
    public var modified: Int64
    public var inode: UInt64

    public init(size: Int64, modified: Int64, inode: UInt64) {
        self.size = size
        self.modified = modified
        self.inode = inode
    }

    /// The stamp of the file at `path` (a link's target's); nil when it cannot be read.
    public init?(path: String) {
        guard let identity = FileIdentity(path: path) else { return nil }
        self.init(identity)
    }

    /// The stamp of the file of that identity.
    public init(_ identity: FileIdentity) {
        self.init(size: identity.size, modified: identity.modified, inode: identity.inode)
    }

    /// The stamp of the file open as `descriptor`; nil when it is not a regular file or cannot be read.
    init?(regularFileOpenAs descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        self.init(FileIdentity(status: info))
    }
}

extension InstalledRegion {
    /// Whether `other` is this record, or this record with the stamp of the file of `identity`
    /// recorded since (``RegionLibrary/recordStamp(_:of:)``): the same install of the same file.
    public func isSameInstall(as other: InstalledRegion, ofFile identity: FileIdentity?) -> Bool {
        if self == other { return true }
        guard let identity, other.fileStamp == RegionFileStamp(identity) else { return false }
        var restamped = self
        restamped.fileStamp = other.fileStamp
        return restamped == other
    }

    /// The SHA-256 recorded for a file whose tiles `verify` found damaged under the hash the
    /// install recorded (``RegionLibrary/markTilesDamaged(of:timeout:)``): no file's, so every look calls
    /// it damaged until it is installed again.
    public static let damagedTilesMark = "tiles-found-damaged-by-verify"

    /// Why such a file is damaged.
    public static var damagedTilesReason: String {
        L.localized("'mapgate verify' found a tile of it damaged (a tile a delta did not change, damaged before the update)")
    }

    /// What became of the file installed for this record.
    public enum Condition: Sendable, Equatable {
        /// As installed.
        case intact
        /// The same bytes (SHA-256) under a new stamp (copied, restored from a backup): `sync`
        /// records the new stamp.
        case intactWithNewStamp(RegionFileStamp)
        /// Truncated, changed or missing: the reason.
        case damaged(String)

        public var isDamaged: Bool { if case .damaged = self { true } else { false } }
    }

    /// Checks the file at `path` against this record: its size always, its stamp next; its
    /// SHA-256 only when the stamp differs (the caller records the new stamp of the same bytes:
    /// ``RegionLibrary/recordStamp(_:of:)``). A region installed before stamps were recorded is
    /// hashed only with `hashingUnstamped` (`sync` and the server, which then record the stamp;
    /// `list` and `tile`, on a data directory they may not be able to write, take the right size
    /// as intact rather than hash it on every run).
    /// Throws only when the file cannot be hashed for want of libcrypto (``SharedLibraryError``)
    /// or libcrypto failed (``LibcryptoError``): that says nothing about the file.
    ///
    /// - Parameter source: what to read, when not `path` itself: a ``HeldFile``'s
    ///   `/proc/self/fd/N` (what is said still names `path`).
    public func condition(ofFileAt path: String, readingFrom source: String? = nil, hashingUnstamped: Bool = true) throws -> Condition {
        let source = source ?? path
        guard let stamp = RegionFileStamp(path: source) else { return .damaged(L.localized("the file %1$s is missing", path)) }
        guard stamp.size == size else { return .damaged(L.localized("its size is %1$s bytes, %2$s were installed", "\(stamp.size)", "\(size)")) }
        if sha256 == Self.damagedTilesMark { return .damaged(Self.damagedTilesReason) }
        if stamp == fileStamp { return .intact }
        guard fileStamp != nil || hashingUnstamped else { return .intact }
        guard let sha256 else { return try tilesCondition(ofFileAt: path, readingFrom: source) }
        let hashed: (hash: String, stamp: RegionFileStamp?)
        do {
            hashed = try Self.hash(source)
        } catch let error where error is SharedLibraryError || error is LibcryptoError {
            throw error
        } catch {
            return .damaged(L.localized("the file %1$s cannot be read", path))
        }
        let hash = hashed.hash
        guard hash == sha256 else { return .damaged(L.localized("its SHA-256 is %1$s…, %2$s… was installed", String(hash.prefix(12)), String(sha256.prefix(12)))) }
        guard let hashedStamp = hashed.stamp else { return .intact }
        return .intactWithNewStamp(hashedStamp)
    }

    /// ``condition(ofFileAt:readingFrom:hashingUnstamped:)`` of a file whose SHA-256 was not taken
    /// (a delta's result): its stamp changed, so it is checked by what the record keeps of it
    /// instead (``contentCheck(ofFileAt:naming:)``), and its new stamp is recorded when it passes.
    private func tilesCondition(ofFileAt path: String, readingFrom source: String) throws -> Condition {
        switch try contentCheck(ofFileAt: source, naming: path) {
        case .intact(let stamp): return .intactWithNewStamp(stamp)
        case .changedWhileChecked: return .intact
        case .unreadable(let reason), .damaged(let reason): return .damaged(reason)
        case .tilesDiffer(let hex):
            return .damaged(L.localized("its tiles hash to %1$s…, %2$s… was installed", String(hex.prefix(12)), String((contentHash ?? "").prefix(12))))
        }
    }

    /// What ``contentCheck(ofFileAt:naming:)`` found.
    public enum ContentCheck: Sendable, Equatable {
        /// The file installed; the stamp of the very file read.
        case intact(RegionFileStamp)
        /// Replaced or written while it was read: nothing is known (look again).
        case changedWhileChecked
        /// It could not be read (no permission, the disk's error): nothing is known about it.
        case unreadable(String)
        /// Its tiles hash to this, not to the recorded `contentHash` (the rest passed).
        case tilesDiffer(String)
        /// Not the file installed: why (a page, its metadata, tiles no pass takes, no hash to
        /// check it by).
        case damaged(String)
    }

    /// Checks the file at `source` (named `path` in what is said) against this record, which has
    /// no SHA-256: its pages pass SQLite's `quick_check` (the tiles alone do not cover every
    /// page), its tiles hash to the recorded `contentHash` (about twice a SHA-256's time) and its
    /// metadata to the recorded digest. All through one open file, whose stamp is the one
    /// returned (found by an attack: two files swapped at the path in a loop got the stamp of one
    /// recorded beside the checks of the other, and its other tiles were served as intact).
    /// A record without both hashes (written by a build before the metadata digest, or rewritten
    /// by an older mapgate) has no identity to check: damaged, and `sync` installs it again.
    /// Throws only when libcrypto is missing or failed.
    public func contentCheck(ofFileAt source: String, naming path: String? = nil) throws -> ContentCheck {
        let path = path ?? source
        guard let contentHash, let metadataSHA256 else { return .damaged(L.localized("its record holds no hash to check it by")) }
        let descriptor = open(source, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let missing = errno == ENOENT || errno == ENOTDIR
            let reason = missing ? L.localized("the file %1$s is missing", path) : L.localized("the file %1$s cannot be read: %2$s", path, SystemErrorReason.text(errno))
            return missing ? .damaged(reason) : .unreadable(reason)
        }
        let file = UnixFile(fileDescriptor: descriptor, closeOnDealloc: true)
        func stamp() -> RegionFileStamp? { RegionFileStamp(regularFileOpenAs: descriptor) }
        guard let before = stamp() else { return .damaged(L.localized("the file %1$s cannot be read", path)) }
        let through = "/proc/self/fd/\(descriptor)"
        let tiles: TilesetHash
        let metadata: String
        do {
            let mbtiles = try MBTilesFile(path: path, immutable: true, openingThrough: through)
            try mbtiles.checkIntegrity()
            metadata = try mbtiles.metadataDigest()
            tiles = try TilesetHash.compute(ofFileAt: through, immutable: true)
        } catch let error where error is SharedLibraryError || error is LibcryptoError {
            throw error
        } catch {
            let reason = L.localized("the file %1$s cannot be read: %2$s", path, errorMessage(error).replacing(through, with: path))
            // The disk's error (or no permission) is no verdict on the file; SQLite's others (a
            // schema that names no such column: found by an attack) are its damage.
            let isDisk = if let error = error as? SQLiteError { error.isUnreadable } else { (error as? any MapGateFailure)?.kind == .io }
            if isDisk { return .unreadable(reason) }
            return stamp() == before ? .damaged(reason) : .changedWhileChecked
        }
        guard withExtendedLifetime(file, { stamp() }) == before else { return .changedWhileChecked }
        guard tiles.hex == contentHash.uppercased() else { return .tilesDiffer(tiles.hex) }
        guard metadata == metadataSHA256 else {
            return .damaged(
                L.localized("its metadata is not as installed (SHA-256 %1$s…, %2$s… was installed)", String(metadata.prefix(12)), String(metadataSHA256.prefix(12))))
        }
        return .intact(before)
    }

    /// The SHA-256 of the file at `path`, and the stamp of the very file hashed when it did not
    /// change while it was hashed (else nil). Both come from one open file: a stamp taken from the
    /// path beside a hash of the path could be another file's (found by an attack: two files
    /// swapped at the path with `renameat2(RENAME_EXCHANGE)` in a loop got the stamp of a file with
    /// other tiles recorded beside the installed file's hash, which then was served as intact).
    /// Opened without blocking (a FIFO put there holds nothing up) and read only if a regular file.
    static func hash(_ path: String) throws -> (hash: String, stamp: RegionFileStamp?) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw GeneralFailure(L.localized("cannot read %1$s to hash it", "\(path)"), kind: .io) }
        let file = UnixFile(fileDescriptor: descriptor, closeOnDealloc: true)
        func stamp() -> RegionFileStamp? { RegionFileStamp(regularFileOpenAs: descriptor) }
        guard let before = stamp() else { throw GeneralFailure(L.localized("cannot read %1$s to hash it", "\(path)"), kind: .io) }
        let hash = try SHA256Hasher.hex(reading: file)
        return (hash, stamp() == before ? before : nil)
    }
}
