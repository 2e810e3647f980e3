import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// One `.mbtiles` file of the input folder (or one made from a `.pmtiles` archive of it) and
/// what the catalog calls it.
struct PublishSource: Sendable, Equatable {
    /// The MBTiles file that becomes the package.
    var path: String
    /// The `.pmtiles` archive `path` was converted from, if any: its bytes are the source whose
    /// SHA-256 the history keeps.
    var archivePath: String?
    var fileName: String
    var id: String
    var name: String
    var version: String
    var minimumAppVersion: String?
    /// The file's size: the catalog's `installedSize`.
    var installedSize: Int64
    /// True when the version is the file's metadata `version` (not regions.json's): tools write
    /// their own there (GDAL 1.1, tippecanoe 2), so publish says where it came from.
    var isVersionFromMetadata = false

    /// Reads the identity of the file at `path`: id from the file name, name and version from its
    /// metadata, each replaced by `override` when given. Opening the file is the first check that
    /// it is an MBTiles file at all.
    /// `fileName` is the input's own name when `path` was made from it (a `.pmtiles` archive).
    static func read(path: String, override: RegionOverride?, fileName: String? = nil) throws -> PublishSource {
        let fileName = fileName ?? PathText.lastComponent(path)
        let stem = PathText.deletingExtension(fileName)
        func fail(_ reason: String) -> PublishError { PublishError(path, reason) }
        // Checked before SQLite opens it: opening a FIFO waits for a writer forever.
        if let reason = FileManager.default.notRegularFileReason(atPath: path) { throw fail(reason) }
        // Pages still in a `-wal` are not in the file that becomes the package. Inputs are read
        // immutable (no lock, no `-wal`/`-shm` left in the publisher's folder), which is sound
        // only for a file whose content is all in it.
        let pending = FileManager.default.sizeOfItem(atPath: path + "-wal")
        if pending > 0 {
            throw fail(
                L.localized(
                    "%1$s-wal holds %2$s of changes not yet in the file, which the package would miss: close the program writing it, or run sqlite3 %1$s 'PRAGMA wal_checkpoint(TRUNCATE)'",
                    fileName, ByteCount.text(pending)))
        }
        // Nor a write cut off (or under way) in rollback-journal mode: its `-journal` begins with
        // the journal's magic until the write commits or is rolled back, and the file holds its
        // pages half written, which SQLite would roll back on opening it, but not read immutable
        // (found by an attack: an uncommitted name and half-changed tiles were published).
        if Self.holdsHotJournal(path + "-journal") {
            throw fail(
                L.localized(
                    "%1$s-journal holds a write to it that was cut off or is still under way, and the file is half written: close the program writing it, or open it once with sqlite3 (sqlite3 %1$s 'PRAGMA quick_check'), which rolls the write back",
                    fileName))
        }
        // Said as what it is: the probe's "gzipped twice" is for packages, which sync unpacks once.
        if SQLiteFileProbe.isGzip(path) {
            throw fail(L.localized("gzip-compressed data, not an MBTiles (SQLite) file: unpack it first (gunzip -c FILE > UNPACKED.mbtiles)"))
        }
        let metadata: [String: String]
        do {
            let file = try MBTilesFile(path: path, immutable: true)
            // One value each: the last of two rows was taken, which the publisher may not have
            // meant (found by an attack: two `version` rows published the second without a word).
            if let conflict = try file.conflictingMetadata().first {
                let shown = conflict.values.prefix(3).map { "\"\($0.prefix(40))\"" }.joined(separator: ", ")
                throw fail(
                    L.localized(
                        "metadata \"%1$s\" is given %2$s times with different values (%3$s); keep one row (DELETE FROM metadata WHERE name = '%1$s' AND value <> '...')",
                        TerminalText.inline(String(conflict.name.prefix(40))), "\(conflict.values.count)", TerminalText.inline(shown)))
            }
            metadata = try file.metadata()
        } catch let error as MBTilesError {
            throw fail(error.reason)
        }
        let id = override?.id ?? stem
        if let problem = Catalog.regionIDProblem(id) {
            let origin = override?.id == nil ? L.localized("the file name") : "regions.json"
            throw fail(L.localized("region id from %1$s is not valid: %2$s; rename the file or set \"id\" in regions.json", "\(origin)", TerminalText.inline(problem)))
        }
        guard let version = override?.version ?? metadata["version"].map({ $0.trimmingWhitespace() }), !version.isEmpty else {
            throw fail(L.localized("no version: set metadata \"version\" in the file or give \"version\" for \"%1$s\" in regions.json", "\(fileName)"))
        }
        guard Catalog.isFileSafeVersion(version) else {
            throw fail(L.localized("version \"%1$s\" cannot be part of a file name ([A-Za-z0-9][A-Za-z0-9._+-]{0,63})", TerminalText.inline(version)))
        }
        // Its package would be named as a delta is (`ID-VERSION.mbtiles.gz` against
        // `ID-FROM-to-TO.delta.mbtiles.gz`): region `a-1-to` version `2.delta` and region `a`'s
        // delta from 1 to 2 were one file (found by an attack).
        guard !version.lowercased().hasSuffix(".delta") else {
            throw fail(L.localized("version \"%1$s\" ends in .delta, which names delta packages; give another version", TerminalText.inline(version)))
        }
        let name = override?.name ?? metadata["name"].flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 } ?? id
        if let problem = Self.nameProblem(name) {
            let origin = override?.name == nil ? L.localized("metadata \"name\"") : "regions.json"
            throw fail(L.localized("the region's name (from %1$s) %2$s; set \"name\" in regions.json", origin, problem))
        }
        let size = FileManager.default.sizeOfItem(atPath: path)
        return PublishSource(
            path: path, fileName: fileName, id: id, name: name, version: version, minimumAppVersion: override?.minimumAppVersion,
            installedSize: size, isVersionFromMetadata: override?.version == nil)
    }

    /// Whether `journal` is a rollback journal SQLite would play back: it begins with the
    /// journal's magic (a committed write deletes it, truncates it or zeroes that header).
    static func holdsHotJournal(_ journal: String) -> Bool {
        guard let descriptor = try? RegularFile(forReadingAtPath: journal).take() else { return false }
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 8)
        return pread(descriptor, &head, 8, 0) == 8 && head == [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]
    }

    /// The longest name a region may have, in characters: a name is a heading on pages and a cell
    /// of tables, not a description (found by an attack: 5,400 characters covered the map).
    public static let maximumNameLength = 200

    /// Why `name` cannot be a region's name: a control character (a terminal or a page would show
    /// it raw, or take it for a command), a direction override or isolate (U+202A–U+202E,
    /// U+2066–U+2069: "abc\u{202E}gnp.exe" reads "abcexe.png", and an isolate reorders its runs),
    /// or more than ``maximumNameLength`` characters; nil when it can.
    static func nameProblem(_ name: String) -> String? {
        func codePoint(_ scalar: Unicode.Scalar) -> String {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        if let scalar = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            return L.localized("holds a control character (%1$s)", codePoint(scalar))
        }
        if let scalar = name.unicodeScalars.first(where: { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }) {
            return L.localized("holds a direction override (%1$s), which can make a name read as another", codePoint(scalar))
        }
        if name.count > maximumNameLength {
            return L.localized("is %1$s characters long, more than %2$s", "\(name.count)", "\(maximumNameLength)")
        }
        return nil
    }
}
