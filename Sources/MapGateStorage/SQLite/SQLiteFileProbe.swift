import FoundationEssentials
import MapGateBase

/// Says why a file is not a readable SQLite database, in words for a person: in particular when
/// it is gzip data (a package gzipped twice unpacks once to another gzip stream, and SQLite alone
/// would only say "file is not a database").
package enum SQLiteFileProbe {
    /// True when the file at `path` starts with gzip's magic bytes `1F 8B`.
    package static func isGzip(_ path: String) -> Bool {
        guard let handle = UnixFile(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 2)) ?? Data()
        return head == Data([0x1F, 0x8B])
    }

    /// True when the file at `path` starts with PMTiles' magic `PMTiles` (spec v3).
    static func isPMTiles(_ path: String) -> Bool {
        guard let handle = UnixFile(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 7)) == Data("PMTiles".utf8)
    }

    /// SQLite's complaint about the file at `path`, with the gzip hint when it applies.
    package static func reason(_ message: String, path: String) -> String {
        if isPMTiles(path) { return L.localized("a PMTiles archive, not an MBTiles (SQLite) file: convert it first (pmtiles convert FILE.pmtiles FILE.mbtiles)") }
        guard isGzip(path) else { return L.localized("not a readable SQLite file: %1$s", message) }
        return L.localized("not a readable SQLite file: it is still gzip-compressed after unpacking (gzipped twice?)")
    }

    /// Nil when SQLite can open the file at `path` and read its schema; otherwise the reason.
    /// Opened immutable: a probe leaves no side file.
    static func problem(at path: String) -> String? {
        do {
            let database = try SQLiteDatabase(path: path, mode: .immutable)
            _ = try database.query("SELECT count(*) FROM sqlite_master") { $0.int(0) }
            return nil
        } catch let error as SQLiteError {
            return reason(error.message, path: path)
        } catch {
            return L.localized("not a readable SQLite file: %1$s", "\(error)")
        }
    }
}
