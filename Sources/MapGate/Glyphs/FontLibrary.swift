import Foundation

/// The fonts on this machine that glyphs can be made from: TrueType and OpenType files found under
/// the given folders (the user's `fontPaths`, then Debian's font folders), by name (`family style`).
///
/// Only names and paths are kept; a font is opened when a glyph range first needs it.
public struct FontLibrary: Sendable {
    /// Debian's font folders (`fonts-dejavu-core`, `fonts-noto-core`, … install there).
    public static let systemFolders = ["/usr/share/fonts", "/usr/local/share/fonts"]

    /// Font name → file, in the order found (the first of two files with one name wins).
    public let fonts: [String: String]

    /// Looks through `folders` (recursively, following no link out of them, at most 20,000
    /// entries each) for `.ttf` and `.otf` files that FreeType can open.
    public init(folders: [String]) {
        var fonts: [String: String] = [:]
        for folder in folders {
            guard let walker = FileManager.default.enumerator(atPath: folder) else { continue }
            var seen = 0
            while let relative = walker.nextObject() as? String, seen < 20_000 {
                seen += 1
                let lower = relative.lowercased()
                guard lower.hasSuffix(".ttf") || lower.hasSuffix(".otf") else { continue }
                let path = folder + "/" + relative
                guard let face = try? FontFace(path: path) else { continue }
                if fonts[face.name] == nil { fonts[face.name] = path }
            }
        }
        self.fonts = fonts
    }

    /// The font names, sorted.
    public var names: [String] { fonts.keys.sorted() }
}
