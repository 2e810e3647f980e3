import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage

/// The `.pmtiles` inputs of one publish, each converted to an MBTiles file in a folder of its own
/// under the temporary directory (`$TMPDIR`), so that the rest of `publish` runs unchanged on it:
/// the same checks (bounds, zooms, formats, vector_layers), the same deterministic package, deltas
/// as for MBTiles. The conversion is deterministic too (``MBTilesWriter``): one archive published
/// twice gives one package SHA-256. Not `Sendable`: one publish's own.
public struct PMTilesInputs {
    /// The folder the converted files are in, made on first use.
    private(set) var folder: String?
    /// A descriptor of `folder`, locked (`flock`) while this run uses it: how another run knows
    /// the folder is not a leftover, in any PID namespace (``removeLeftovers(in:)``).
    private var folderLock: Int32 = -1
    /// The archive each converted file came from, by the converted file's path.
    private(set) var archives: [String: String] = [:]

    /// Converts the archive at `path` and returns the MBTiles file's path (named as the archive,
    /// with `.mbtiles`). A malformed archive is a ``PublishError`` naming it, with the reason.
    mutating func convert(_ path: String, temporaryDirectory: String) throws -> String {
        let folder: String
        if let made = self.folder {
            folder = made
        } else {
            (folder, folderLock) = try Self.makeFolder(in: temporaryDirectory)
            self.folder = folder
        }
        let converted = folder + "/" + PathText.deletingExtension(PathText.lastComponent(path)) + ".mbtiles"
        do {
            let archive = try PMTilesArchive(path: path)
            guard archive.format != nil || archive.header.tileType == .unknown else {
                throw PublishError(path, L.localized("its tiles are AVIF, which MBTiles regions cannot hold (png, jpg, webp or pbf)"))
            }
            // One row per tile: a run of one tile's id (an ocean deduplicated) becomes that many
            // rows, and a small archive can ask for terabytes (found by an attack: 313 bytes wrote
            // 1.4 GB). What it needs at most is said before anything is written, if it does not fit.
            let gzippedImages = archive.header.tileCompression == .gzip && archive.header.tileType.isRaster
            // At most 2^26 tiles of at most 4 GiB each (and a row's 32 bytes): no overflow.
            let needed = try archive.tileEntries().reduce(Int64(0)) { total, run in
                let row = gzippedImages ? min(Int64(TileLimits.maximumUnpackedSize), Int64(run.length) * 4 + (64 << 10)) : Int64(run.length)
                return total + Int64(run.runLength) * (row + 32)
            }
            if let free = freeDiskSpace(at: folder), needed > free {
                throw PublishError(
                    path,
                    L.localized(
                        "converting it to MBTiles (one row per tile, a run of shared tiles included) needs up to %1$s in %2$s, which has %3$s free: set TMPDIR to a folder with room",
                        ByteCount.text(needed), folder, ByteCount.text(free)), kind: .io)
            }
            try MBTilesWriter.write(archive, metadata: try archive.metadata(whole: true), to: converted)
        } catch let error as PMTilesError {
            try? FileManager.default.removeItem(atPath: converted)
            throw PublishError(path, error.reason, kind: error.kind)
        } catch let error as MBTilesError {
            try? FileManager.default.removeItem(atPath: converted)
            throw PublishError(path, L.localized("cannot convert it to MBTiles in %1$s: %2$s", folder, error.reason), kind: .io)
        }
        archives[converted] = path
        return converted
    }

    /// A new folder `mapgate-publish-PID-XXXXXX` in `temporaryDirectory` (`mkdtemp`), and a
    /// descriptor of it holding its lock, after removing the folders that runs killed before
    /// their end left there (found by an attack: a publish killed with SIGKILL left its converted
    /// archive for good).
    static func makeFolder(in temporaryDirectory: String) throws -> (path: String, lock: Int32) {
        removeLeftovers(in: temporaryDirectory)
        var template = Array((temporaryDirectory + "/\(folderPrefix)\(getpid())-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PublishError(temporaryDirectory, L.localized("cannot make a folder to convert PMTiles archives in: %1$s", SystemErrorReason.text(errno)), kind: .io)
        }
        let path = String(cString: made)
        let lock = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if lock >= 0 { _ = flock(lock, LOCK_EX | LOCK_NB) }
        madeFolders.withLock { _ = $0.insert(path) }
        return (path, lock)
    }

    /// The folders this process made and has not removed yet: what a signal that ends the run
    /// removes (``removeFoldersOfThisProcess()``).
    private static let madeFolders = Locked<Set<String>>([])

    static let folderPrefix = "mapgate-publish-"

    /// Removes the folders named as publish names them (`mapgate-publish-PID-XXXXXX`) in
    /// `temporaryDirectory` that this user owns and no run holds: the lock of a folder in use
    /// stays held until its run ends, however it ends, whichever PID namespace it runs in (found
    /// by an attack: a run in a container, whose PID meant nothing here, lost its folder in the
    /// middle of a conversion). A folder of another user, a link, a name publish does not make,
    /// or a folder whose lock cannot be tried, stays.
    static func removeLeftovers(in temporaryDirectory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory) else { return }
        let now = time(nil)
        for name in names where isFolderName(name) {
            let path = temporaryDirectory + "/" + name
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var info = stat()
            // A folder made in the last minute may not be locked yet (mkdtemp, then flock).
            guard fstat(descriptor, &info) == 0, info.st_uid == getuid(), now - info.st_mtim.tv_sec > 60,
                flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// `mapgate-publish-`, a PID (digits, no leading zero), `-`, and `mkdtemp`'s six characters.
    static func isFolderName(_ name: String) -> Bool {
        guard name.hasPrefix(folderPrefix) else { return false }
        let parts = name.dropFirst(folderPrefix.count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let pid = parts.first, let digit = pid.first, digit != "0",
            pid.allSatisfy({ $0.isASCII && $0.isNumber }), pid.count <= 10, parts[1].count == 6,
            parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return false }
        return true
    }

    /// Removes the conversion folders this process made (a signal ends the run: whoever handles
    /// it does not hold the publisher's inputs, this registry does).
    public static func removeFoldersOfThisProcess() {
        for path in madeFolders.withLock({ folders in defer { folders.removeAll() }; return folders }) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// `error` with every converted file's path replaced by its archive's.
    func namingArchives(_ error: PublishError) -> PublishError {
        var subject = error.subject
        var reason = error.reason
        for (converted, archive) in archives {
            subject = subject.replacing(converted, with: archive)
            reason = reason.replacing(converted, with: archive)
        }
        return PublishError(subject, reason, kind: error.kind)
    }

    /// Removes the converted files and their folder.
    mutating func removeAll() {
        if let folder {
            try? FileManager.default.removeItem(atPath: folder)
            Self.madeFolders.withLock { _ = $0.remove(folder) }
        }
        if folderLock >= 0 { close(folderLock) }
        folderLock = -1
        folder = nil
        archives = [:]
    }
}
