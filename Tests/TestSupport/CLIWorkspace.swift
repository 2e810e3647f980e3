import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MapGate
import MapGateDemo

/// What a CLI test works in: a temporary folder, a test origin serving its `www/` folder
/// (lookup answers, a catalog, packages), and the built binary pointed at `data/` and
/// `config.json` inside it.
public final class CLIWorkspace {
    public let work: TemporaryDirectory
    public let origin: TestOrigin
    public let builder: CatalogBuilder
    public let mapgate: MapGateBinary

    /// - Parameter user: run the binary as this uid (see ``MapGateBinary/user``).
    public init(user: uid_t? = nil) throws {
        work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.file("www"), withIntermediateDirectories: true)
        origin = try TestOrigin(root: work.file("www"))
        builder = CatalogBuilder(root: work.file("www"))
        mapgate = try MapGateBinary(workDirectory: work.path, user: user)
    }

    public var lookupURL: String { origin.baseURL + "/lookup.json" }
    public var catalogURL: String { origin.baseURL + "/catalog.json" }

    /// Makes the origin's lookup answer report `version`.
    public func publish(version: String, storeURL: String = "https://apps.example/mapgate", notes: String? = nil) throws {
        var result: [String: Any] = ["version": version, "trackViewUrl": storeURL, "trackId": 1]
        if let notes { result["releaseNotes"] = notes }
        let answer: [String: Any] = ["resultCount": 1, "results": [result]]
        try JSONSerialization.data(withJSONObject: answer).write(to: URL(fileURLWithPath: work.file("www/lookup.json")))
    }

    /// Adds a region made from a real MBTiles file to the origin's catalog.
    public func offer(_ id: String, fixture: String, format: String, version: String = "1") throws {
        try builder.add(id: id, source: try TestPaths.shared("mbtiles/" + fixture), version: version, format: format)
        try builder.write()
    }
}
