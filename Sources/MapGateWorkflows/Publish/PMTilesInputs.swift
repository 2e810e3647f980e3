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
    /// The archive each converted file came from, by the converted file's path.
    private(set) var archives: [String: String] = [:]

    /// Converts the archive at `path` and returns the MBTiles file's path (named as the archive,
    /// with `.mbtiles`). A malformed archive is a ``PublishError`` naming it, with the reason.
    mutating func convert(_ path: String, temporaryDirectory: String) throws -> String {
        let folder = try self.folder ?? Self.makeFolder(in: temporaryDirectory)
        self.folder = folder
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
            try MBTilesWriter.write(archive, metadata: try archive.metadata(), to: converted)
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

    /// A new folder `mapgate-publish-PID-XXXXXX` in `temporaryDirectory` (`mkdtemp`), after
    /// removing such folders of this user's publishes that no longer run (found by an attack: a
    /// publish killed with SIGKILL left its converted archive there for good).
    public static func makeFolder(in temporaryDirectory: String) throws -> String {
        removeLeftovers(in: temporaryDirectory)
        var template = Array((temporaryDirectory + "/\(folderPrefix)\(getpid())-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PublishError(temporaryDirectory, L.localized("cannot make a folder to convert PMTiles archives in: %1$s", SystemErrorReason.text(errno)), kind: .io)
        }
        return String(cString: made)
    }

    static let folderPrefix = "mapgate-publish-"

    /// Removes `mapgate-publish-PID-*` folders in `temporaryDirectory` that this user owns and whose
    /// process no longer runs. A folder of another user, or of a process still running, stays.
    static func removeLeftovers(in temporaryDirectory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory) else { return }
        for name in names where name.hasPrefix(folderPrefix) {
            let parts = name.dropFirst(folderPrefix.count).split(separator: "-")
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, kill(pid, 0) != 0, errno == ESRCH else { continue }
            var info = stat()
            let path = temporaryDirectory + "/" + name
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else { continue }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Whether `folder` holds a PMTiles archive publish would read (`*.pmtiles`, not hidden).
    public static func areAmong(_ folder: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { $0.hasSuffix(".pmtiles") && !$0.hasPrefix(".") }
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
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
        folder = nil
        archives = [:]
    }
}
