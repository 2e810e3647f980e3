import Foundation
import MapGate

/// Writes region packages and a catalog into a folder an origin serves.
public final class CatalogBuilder {
    public let root: String
    public private(set) var regions: [[String: Any]] = []

    public init(root: String) {
        self.root = root
    }

    /// Adds a package made from `source` (gzipped when `gzip`), with catalog fields computed
    /// from it; `overrides` replace any field (to declare a wrong size or hash, say).
    @discardableResult
    public func add(
        id: String, source: String, version: String = "1", format: String, minzoom: Int = 0, maxzoom: Int = 14, gzip: Bool = true,
        overrides: [String: Any] = [:]
    ) throws -> [String: Any] {
        let packageName = "packages/\(id)-\(version).mbtiles" + (gzip ? ".gz" : "")
        let packagePath = root + "/" + packageName
        try FileManager.default.createDirectory(atPath: root + "/packages", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: packagePath)
        if gzip {
            let result = try runProcess("/bin/sh", ["-c", "gzip -c -6 \"$0\" > \"$1\"", source, packagePath])
            guard result.status == 0 else { throw MissingFixture(path: "gzip of \(source): \(result.stderr)") }
        } else {
            try FileManager.default.copyItem(atPath: source, toPath: packagePath)
        }
        let size = try Self.size(packagePath)
        var entry: [String: Any] = [
            "id": id, "name": id.capitalized, "version": version, "url": packageName, "size": size,
            "sha256": try SHA256Hasher.hex(ofFileAt: packagePath), "installedSize": try Self.size(source) + 4096,
            "format": format, "minzoom": minzoom, "maxzoom": maxzoom, "bounds": [-180, -85, 180, 85],
        ]
        entry.merge(overrides) { $1 }
        if let index = regions.firstIndex(where: { ($0["id"] as? String) == id }) {
            regions[index] = entry
        } else {
            regions.append(entry)
        }
        return entry
    }

    /// Writes `catalog.json` and returns its path.
    @discardableResult
    public func write(extra: [String: Any] = [:]) throws -> String {
        var catalog: [String: Any] = [
            "formatVersion": 1, "publisher": "Test Maps", "generated": "2026-11-01T00:00:00Z", "regions": regions,
        ]
        catalog.merge(extra) { $1 }
        let path = root + "/catalog.json"
        try JSONSerialization.data(withJSONObject: catalog, options: [.sortedKeys, .prettyPrinted]).write(to: URL(fileURLWithPath: path))
        return path
    }

    public static func size(_ path: String) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
