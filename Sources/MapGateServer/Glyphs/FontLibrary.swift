import FoundationEssentials
import MapGateBase

/// The fonts on this machine that glyphs can be made from: TrueType and OpenType files and
/// collections (`.ttf`, `.otf`, `.ttc`) found under the given folders (the user's `fontPaths`, then
/// Debian's font folders), by name (`family style`).
///
/// Only names and paths are kept; a font is opened when a glyph range first needs it.
public struct FontLibrary: Sendable {
    /// Debian's font folders (`fonts-dejavu-core`, `fonts-noto-core`, … install there).
    public static let systemFolders = ["/usr/share/fonts", "/usr/local/share/fonts"]

    /// Where one font is: a file, and the face in it (0 but in a collection).
    public struct Location: Sendable, Equatable, Hashable {
        public var path: String
        public var index: Int
    }

    /// Font name → where it is, in the order found (the first of two with one name wins).
    public let fonts: [String: Location]

    /// Looks through `folders` (recursively, at most 20,000 entries each) for font files that
    /// FreeType can open.
    public init(folders: [String]) {
        var fonts: [String: Location] = [:]
        for folder in folders {
            var seen = 0
            PathText.walk(folder) { relative in
                guard seen < 20_000 else { return false }
                seen += 1
                let lower = relative.lowercased()
                guard lower.hasSuffix(".ttf") || lower.hasSuffix(".otf") || lower.hasSuffix(".ttc") else { return true }
                let path = folder + "/" + relative
                guard let first = try? FontFace(path: path) else { return true }
                if fonts[first.name] == nil { fonts[first.name] = Location(path: path, index: 0) }
                for index in 1..<min(first.faceCount, 16) {
                    guard let face = try? FontFace(path: path, index: index) else { continue }
                    if fonts[face.name] == nil { fonts[face.name] = Location(path: path, index: index) }
                }
                return true
            }
        }
        self.fonts = fonts
    }

    /// The font names, sorted.
    public var names: [String] { fonts.keys.sorted() }
}
