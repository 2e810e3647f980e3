import FoundationEssentials
import MapGateBase

/// The user's preferences, read from a JSON file. Every key is optional; unknown keys are errors.
///
/// Only preferences live here. The gate's rules (which app, which store, how long the grace
/// lasts, how many uses) belong to the publisher: the compiled-in ``ProductProfile`` and the
/// root-owned ``ManagedPolicy``. A gate key in this file is an error that says so.
public struct Configuration: Sendable, Equatable {
    /// A mirror of the publisher's catalog (else the profile's or the policy's).
    public var catalogURL: String?
    /// A CA bundle (PEM) to trust instead of the system's, for catalogs and packages (never for
    /// the store lookup).
    public var caFile: String?
    /// Where Debian's `libjs-leaflet` puts Leaflet, for the viewer page.
    public var leafletPath: String = "/usr/share/javascript/leaflet"
    /// MapLibre GL JS (from the pinned `maplibre` wheel), for the viewer of vector regions. The
    /// default is where `scripts/install-deps` puts it; when that folder holds no
    /// `maplibre-gl.js`, the server uses the Debian package's (``MapLibreFiles/folder(configured:default:fallbacks:)``).
    public var maplibrePath: String = Configuration.defaultMapLibrePath
    /// Folders of TrueType/OpenType fonts for map labels, looked through before Debian's font
    /// folders (``FontLibrary/systemFolders``).
    public var fontPaths: [String] = []

    public init() {}

    /// Every key with its type and meaning (in the user's language), for `--help`, the manual and
    /// docs/configuration.md.
    public static let keys: [(name: String, type: String, summary: String)] = [
        ("catalogURL", "string", L.localized("a mirror of the publisher's region catalog (http, https or file)")),
        ("caFile", "string", L.localized("PEM CA bundle trusted instead of the system's for catalogs and packages")),
        ("leafletPath", "string", L.localized("folder holding leaflet.js and leaflet.css (default from libjs-leaflet)")),
        ("maplibrePath", "string", L.localized("folder holding maplibre-gl.js and maplibre-gl.css (default /usr/local/share/mapgate/maplibre, else the package's /usr/share/mapgate/maplibre)")),
        ("fontPaths", "list", L.localized("folders of .ttf/.otf fonts for map labels, before /usr/share/fonts and /usr/local/share/fonts")),
    ]
}

extension Configuration {
    /// Where `scripts/install-deps` (or a user) puts MapLibre GL JS: `maplibrePath`'s default.
    public static let defaultMapLibrePath = "/usr/local/share/mapgate/maplibre"

    /// Reads a configuration file. A missing file is an error only when `mustExist`.
    ///
    /// - Parameter policyPath: the managed policy in use, named when a gate key is refused.
    public static func load(path: String, mustExist: Bool, policyPath: String = ManagedPolicy.defaultPath) throws -> Configuration {
        guard FileManager.default.fileExists(atPath: path) else {
            if mustExist { throw ConfigurationError(path: path, key: nil, reason: L.localized("no such file")) }
            return Configuration()
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(path: path, key: nil, reason: L.localized("cannot be read"))
        }
        return try parse(data, path: path, policyPath: policyPath)
    }

    /// Parses and validates the JSON text of a configuration file.
    public static func parse(_ data: Data, path: String, policyPath: String = ManagedPolicy.defaultPath) throws -> Configuration {
        var reader = try JSONFields(data: data, path: path, file: .configuration)
        var config = Configuration()
        config.catalogURL = try reader.url("catalogURL", schemes: ["http", "https", "file"])
        config.caFile = try reader.string("caFile", must: L.localized("a file's path, not empty")) { !$0.isEmpty }
        config.leafletPath = try reader.string("leafletPath") { !$0.isEmpty } ?? config.leafletPath
        config.maplibrePath = try reader.string("maplibrePath") { !$0.isEmpty } ?? config.maplibrePath
        config.fontPaths = try reader.strings("fontPaths", must: JSONFields.absolutePath) { $0.hasPrefix("/") } ?? []
        try reader.rejectUnknownKeys(known: keys.map(\.name)) { key in
            guard GateSettings.keys.contains(where: { $0.name == key }) else { return nil }
            return L.localized("belongs to the managed policy (%1$s), not to the user's configuration: the gate's rules are the publisher's", policyPath)
        }
        return config
    }
}
