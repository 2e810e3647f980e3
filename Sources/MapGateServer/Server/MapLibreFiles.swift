import FoundationEssentials
import MapGateTrust

/// MapLibre GL JS's two files and mapgate's right-to-left text plugin beside them, and no others,
/// from `maplibrePath` (the same rules as Leaflet's).
public enum MapLibreFiles {
    /// mapgate's right-to-left text plugin (issue 41, docs/rtl-text.md), which `scripts/install-deps`
    /// and the package build into the MapLibre folder.
    public static let rtlTextPlugin = "mapgate-rtl-text.js"
    public static let names: Set<String> = ["maplibre-gl.js", "maplibre-gl.css", rtlTextPlugin]

    /// Whether `folder` holds the right-to-left text plugin.
    public static func hasRTLTextPlugin(in folder: String) -> Bool {
        FileManager.default.fileExists(atPath: folder + "/" + rtlTextPlugin)
    }

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
