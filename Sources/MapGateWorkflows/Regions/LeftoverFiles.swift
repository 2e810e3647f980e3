import FoundationEssentials
import MapGateBase

/// What a run of `sync` may leave in the data directory, and how it goes: the files a run
/// assembles in `partial/` (`<id>.installing.mbtiles`, `<id>.patching.mbtiles`), resumable
/// downloads (`<id>.<hash>.part` and `.json`), and SQLite's side files (`-wal`, `-shm`,
/// `-journal`). Only one region's files are ever touched: `a`'s never include `a.b`'s.
enum LeftoverFiles {
    static let sideSuffixes = ["-wal", "-shm", "-journal"]

    /// Removes SQLite's side files of the database at `path`.
    static func removeSideFiles(of path: String) {
        for suffix in sideSuffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// True for the names in `partial/` that region `id` assembles, with their side files.
    static func isAssembled(_ name: String, of id: String, in directory: DataDirectory) -> Bool {
        [directory.installingPath(id), directory.patchingPath(id)].map { PathText.lastComponent($0) }.contains { assembled in
            name == assembled || sideSuffixes.contains { name == assembled + $0 }
        }
    }

    /// Removes what a run that died left of region `id` in `partial/`: the files being
    /// assembled (never resumed: a run makes them afresh) and, with `includingDownloads`, the
    /// resumable downloads too (when the region is installed and up to date, none is needed).
    static func removeDeadRunFiles(of id: String, in directory: DataDirectory, includingDownloads: Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.partialPath)) ?? []
        for name in names where isAssembled(name, of: id, in: directory) || (includingDownloads && isPartial(name, of: id)) {
            try? FileManager.default.removeItem(atPath: directory.partialPath + "/" + name)
        }
    }

    /// The paths of `id`'s partial downloads (``isPartial(_:of:)``) and of the files a run that
    /// died left half-assembled (``isAssembled(_:of:in:)``).
    static func downloads(of id: String, in directory: DataDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.partialPath)) ?? []).filter {
            isPartial($0, of: id) || isAssembled($0, of: id, in: directory)
        }.map { directory.partialPath + "/" + $0 }
    }

    /// True for `<id>.<16 hex digits>.part` and its `.json`: the partials of this region only,
    /// not those of a region whose id merely starts with this one and a dot (`a` and `a.b`).
    static func isPartial(_ name: String, of id: String) -> Bool {
        guard name.hasPrefix(id + ".") else { return false }
        var rest = name.dropFirst(id.count + 1)
        for suffix in [".part.json", ".part"] where rest.hasSuffix(suffix) {
            rest = rest.dropLast(suffix.count)
            return rest.count == 16 && rest.allSatisfy { $0.isASCII && $0.isHexDigit }
        }
        return false
    }

    /// The deltas kept for `id` (``DataDirectory/keptDeltaPath(_:sha256:)``), each path with its SHA-256.
    public static func keptDeltas(of id: String, in directory: DataDirectory) -> [(path: String, sha256: String)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.deltasPath)) ?? []).compactMap { name in
            guard name.hasPrefix(id + ".") else { return nil }
            let rest = name.dropFirst(id.count + 1)
            guard rest.isSHA256Hex else { return nil }
            return (directory.deltasPath + "/" + name, String(rest))
        }
    }

    /// Keeps the delta downloaded at `raw` as the one that updated region `id`, in place of any
    /// kept before (``DataDirectory/keptDeltaPath(_:sha256:)``). Best effort: false when it could
    /// not be moved there (`deltas` not a folder, no room for its entry).
    @discardableResult
    static func keepDelta(_ raw: String, id: String, sha256: String, in directory: DataDirectory) -> Bool {
        removeKeptDeltas(of: id, in: directory)
        try? FileManager.default.createDirectory(atPath: directory.deltasPath, withIntermediateDirectories: true)
        return DurableFile.rename(raw, over: directory.keptDeltaPath(id, sha256: sha256), folder: directory.deltasPath) == nil
    }

    /// Removes the deltas kept for `id` (a full install, a newer delta, `remove`).
    static func removeKeptDeltas(of id: String, in directory: DataDirectory) {
        for kept in keptDeltas(of: id, in: directory) { try? FileManager.default.removeItem(atPath: kept.path) }
    }
}
