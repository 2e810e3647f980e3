import FoundationEssentials

/// The layout of mapgate's data directory.
///
/// ```
/// <data>/state.sqlite          gate state and installed regions (SQLite, WAL)
/// <data>/regions/<id>.mbtiles  installed regions
/// <data>/styles/<id>.json     installed publisher styles (``StyleBundle``)
/// <data>/partial/              resumable downloads and files being installed
/// <data>/lock                  held by the one process changing the directory
/// ```
public struct DataDirectory: Sendable, Equatable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public var statePath: String { path + "/state.sqlite" }
    public var regionsPath: String { path + "/regions" }
    public var partialPath: String { path + "/partial" }
    public var lockPath: String { path + "/lock" }

    public var stylesPath: String { path + "/styles" }

    public func regionPath(_ id: String) -> String { regionsPath + "/\(id).mbtiles" }
    public func stylePath(_ id: String) -> String { stylesPath + "/\(id).json" }

    /// The file a sync assembles (gunzipped, validated) before renaming it over `regionPath`.
    public func installingPath(_ id: String) -> String { partialPath + "/\(id).installing.mbtiles" }

    /// The deltas that updated installed regions, kept as downloaded so that `mapgate mirror`
    /// can pass them on (a region updated by a delta has no full package to rebuild).
    public var deltasPath: String { path + "/deltas" }
    public func keptDeltaPath(_ id: String, sha256: String) -> String { deltasPath + "/\(id).\(sha256)" }
    /// A package's resumable download, as it comes (`<id>.<first 16 hex digits of its SHA-256>.part`).
    public func downloadPath(_ id: String, sha256: String) -> String { partialPath + "/\(id).\(sha256.prefix(16)).part" }

    /// The copy of an installed region a delta is applied to, before it replaces `regionPath`.
    public func patchingPath(_ id: String) -> String { partialPath + "/\(id).patching.mbtiles" }

    /// Creates the directory and its folders when missing.
    public func prepare() throws {
        for folder in [path, regionsPath, partialPath] {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw GeneralFailure(L.localized("data directory %1$s: cannot create it: %2$s", "\(folder)", "\(FileManager.default.folderCreationReason(atPath: folder, error: error))"), kind: .io)
            }
        }
    }
}
