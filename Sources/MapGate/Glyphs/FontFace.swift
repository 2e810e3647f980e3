import CFreeType
import FoundationEssentials

/// One font file opened with FreeType at the size MapLibre's glyphs use (24 px), rendering glyphs
/// as anti-aliased coverage and their metrics. Owns its `FT_Library` and `FT_Face`, freed in
/// `deinit`. Not `Sendable`: one thread at a time (``GlyphService`` locks around it).
final class FontFace {
    /// The size glyph ranges are rendered at.
    static let pixelSize = 24

    let path: String
    /// `family style`, as MapLibre styles name fonts (`DejaVu Sans Bold`, `Noto Sans Regular`).
    let name: String
    private let library: FT_Library
    private let face: FT_Face
    private let ascender: Int

    /// A glyph as FreeType rendered it.
    struct Rendered {
        var coverage: [UInt8]
        var width: Int
        var height: Int
        var left: Int
        var top: Int
        var advance: Int
    }

    /// Opens face `index` of the font file at `path` (a collection, `.ttc`, holds several).
    init(path: String, index: Int = 0) throws {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { throw GlyphError.fontUnreadable(path: path, reason: "FreeType did not start") }
        var face: FT_Face?
        guard FT_New_Face(library, path, FT_Long(index), &face) == 0, let face else {
            FT_Done_FreeType(library)
            throw GlyphError.fontUnreadable(path: path, reason: "not a font FreeType can read")
        }
        guard FT_Set_Pixel_Sizes(face, 0, FT_UInt(Self.pixelSize)) == 0 else {
            FT_Done_Face(face)
            FT_Done_FreeType(library)
            throw GlyphError.fontUnreadable(path: path, reason: "not scalable to \(Self.pixelSize) px")
        }
        self.path = path
        self.library = library
        self.face = face
        let family = face.pointee.family_name.map { String(cString: $0) } ?? PathText.lastComponent(path)
        let style = face.pointee.style_name.map { String(cString: $0) } ?? "Regular"
        name = "\(family) \(style)"
        ascender = Int(face.pointee.size.pointee.metrics.ascender >> 6)
        faceCount = max(1, Int(face.pointee.num_faces))
    }

    /// How many faces the file holds (more than one in a collection).
    let faceCount: Int

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    func hasGlyph(_ codePoint: UInt32) -> Bool {
        FT_Get_Char_Index(face, FT_ULong(codePoint)) != 0
    }

    /// Renders `codePoint`, or nil when the font has no glyph for it (or FreeType fails on it).
    func render(_ codePoint: UInt32) -> Rendered? {
        let index = FT_Get_Char_Index(face, FT_ULong(codePoint))
        guard index != 0, FT_Load_Glyph(face, index, Int32(cft_load_render() | cft_load_no_hinting())) == 0,
            let slot = face.pointee.glyph
        else { return nil }
        let bitmap = slot.pointee.bitmap
        let width = Int(bitmap.width)
        let height = Int(bitmap.rows)
        var coverage = [UInt8](repeating: 0, count: width * height)
        if width > 0, height > 0, let buffer = bitmap.buffer, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) {
            let pitch = Int(bitmap.pitch)
            for row in 0..<height {
                let start = pitch >= 0 ? row * pitch : (height - 1 - row) * -pitch
                for column in 0..<width { coverage[row * width + column] = buffer[start + column] }
            }
        }
        return Rendered(
            coverage: coverage, width: width, height: height, left: Int(slot.pointee.bitmap_left),
            top: Int(slot.pointee.bitmap_top) - ascender, advance: Int((slot.pointee.advance.x + 32) >> 6))
    }
}
