import FoundationEssentials
import MapGateTrust

/// MapLibre GL JS's two files, and no others, from `maplibrePath` (the same rules as Leaflet's).
public enum MapLibreFiles {
    public static let names: Set<String> = ["maplibre-gl.js", "maplibre-gl.css"]

    public static func contents(of name: String, in folder: String) -> Data? {
        guard names.contains(name) else { return nil }
        return LeafletFiles.readRegularFile(name, in: folder)
    }

    /// Where `scripts/install-deps` (or a user) puts MapLibre: the configuration's default.
    public static let localPath = Configuration.defaultMapLibrePath
    /// Where a Debian package of mapgate will put MapLibre.
    public static let packagedPath = "/usr/share/mapgate/maplibre"

    /// The folder to serve MapLibre from: `configured`; but when that is the default
    /// (`localPath`) and holds no `maplibre-gl.js`, the first of `fallbacks` that does (a
    /// folder the user named is never second-guessed).
    public static func folder(configured: String, default defaultFolder: String = localPath, fallbacks: [String] = [packagedPath]) -> String {
        func hasFiles(_ folder: String) -> Bool { FileManager.default.fileExists(atPath: folder + "/maplibre-gl.js") }
        guard configured == defaultFolder, !hasFiles(configured) else { return configured }
        return fallbacks.first(where: hasFiles) ?? configured
    }
}
