import FoundationEssentials
import MapGateBase

/// What `regions.json` in the input folder says about one file: replacements for the values
/// `publish` would derive (id from the file name, name and version from the metadata).
public struct RegionOverride: Sendable, Equatable {
    public var id: String?
    public var name: String?
    public var version: String?
    public var minimumAppVersion: String?

    public static let keys = ["id", "name", "version", "minimumAppVersion"]

    /// Reads `regions.json`: an object keyed by file name (`kr-seoul.mbtiles`), each value an
    /// object of ``keys``. A missing file means no overrides; anything malformed is an error
    /// naming the file, the entry and the key.
    public static func load(path: String) throws -> [String: RegionOverride] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        func fail(_ reason: String) -> PublishError { PublishError(path, reason) }
        let data: Data
        do {
            // A regular file only, opened without waiting: a FIFO or a device is refused as such
            // (Foundation's read said "permission denied" of a FIFO, even to root).
            data = try RegularFile(forReadingAtPath: path).readAll()
        } catch let error as RegularFileError {
            throw PublishError(path, error.reason, kind: error.kind)
        } catch {
            throw PublishError(path, L.localized("cannot read it: %1$s", "\(errorMessage(error))"), kind: .io)
        }
        let parsed: JSONValue
        do { parsed = try JSONValue(parsing: data) } catch { throw fail(L.localized("not valid JSON: %1$s", error.explanation(in: data))) }
        // As the catalog's reader refuses it (found by an attack: the last of two entries for one
        // file won, in silence).
        if let key = JSONValue.duplicateKey(in: data) {
            throw fail(L.localized("the key \"%1$s\" appears twice in one object: which one counts would be a guess", TerminalText.inline(String(key.prefix(80)))))
        }
        guard let object = parsed.objectValue else { throw fail(L.localized("not a JSON object keyed by file name")) }
        var result: [String: RegionOverride] = [:]
        for fileName in object.keys.sorted() {
            guard let fields = object[fileName]?.objectValue else { throw fail(L.localized("\"%1$s\" is not an object", "\(fileName)")) }
            if let unknown = fields.keys.sorted().first(where: { !keys.contains($0) }) {
                throw fail(L.localized("\"%1$s\": unknown key \"%2$s\" (allowed: %3$s)", "\(fileName)", "\(unknown)", "\(keys.joined(separator: ", "))"))
            }
            func string(_ key: String) throws -> String? {
                guard let raw = fields[key] else { return nil }
                // Blank counts as empty (found by an attack: a name of spaces was published, and
                // shown as nothing in `catalog`).
                guard let text = raw.stringValue, !text.allSatisfy(\.isWhitespace) else { throw fail(L.localized("\"%1$s\": %2$s must be a non-empty string", "\(fileName)", "\(key)")) }
                return text
            }
            let entry = RegionOverride(
                id: try string("id"), name: try string("name"), version: try string("version"),
                minimumAppVersion: try string("minimumAppVersion"))
            if let minimum = entry.minimumAppVersion, (try? AppVersion(minimum)) == nil {
                throw fail(L.localized("\"%1$s\": minimumAppVersion \"%2$s\" is not a version", "\(fileName)", "\(minimum)"))
            }
            result[fileName] = entry
        }
        return result
    }
}
