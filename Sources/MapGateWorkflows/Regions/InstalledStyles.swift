import FoundationEssentials
import MapGateBase
import MapGateStorage
import MapGateTrust

/// The publisher's styles installed in a data directory (`<data>/styles/ID.json`, one
/// ``StyleBundle`` each), for `list` and `remove`: what `sync` installed beside the regions.
public struct InstalledStyles {
    public let directory: DataDirectory

    public init(directory: DataDirectory) {
        self.directory = directory
    }

    /// One installed style, or why its file cannot be used.
    public struct Entry: Sendable {
        public var id: String
        public var bundle: StyleBundle?
        /// Why the file does not pass the checks (nil when it does).
        public var damaged: String?
    }

    /// Every `styles/*.json`, in id order; a file that does not decode is listed with the reason.
    public func all() throws -> [Entry] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.stylesPath)
        } catch where !FileManager.default.fileExists(atPath: directory.stylesPath) {
            return []
        }
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(Catalog.isValidStyleID).sorted().map(entry)
    }

    private func entry(_ id: String) -> Entry {
        let path = directory.stylePath(id)
        guard FileManager.default.sizeOfItem(atPath: path) <= StyleBundle.maximumSize, let data = FileManager.default.contents(atPath: path) else {
            return Entry(id: id, bundle: nil, damaged: "cannot read \(path)")
        }
        do {
            return Entry(id: id, bundle: try StyleBundle.decode(data, expectedID: id), damaged: nil)
        } catch {
            return Entry(id: id, bundle: nil, damaged: errorMessage(error))
        }
    }

    /// Whether a style of that id is installed (its file is there, usable or not).
    public func contains(_ id: String) -> Bool {
        Catalog.isValidStyleID(id) && FileManager.default.fileExists(atPath: directory.stylePath(id))
    }

    /// Removes the style `id` (its file); returns what it was. Needs the data-directory lock.
    @discardableResult
    public func remove(_ id: String, lock: DirectoryLock) throws -> Entry {
        let entry = entry(id)
        do {
            try FileManager.default.removeItem(atPath: directory.stylePath(id))
        } catch {
            throw StyleError(style: id, reason: L.localized("cannot delete %1$s: %2$s", "\(directory.stylePath(id))", "\(errorMessage(error))"), kind: .io)
        }
        return entry
    }
}
