import CFreeType
import FoundationEssentials
import MapGateBase

/// One font file opened with FreeType at the size MapLibre's glyphs use (24 px), rendering glyphs
/// as anti-aliased coverage and their metrics. Owns its `FT_Library` and `FT_Face`, freed in
/// `deinit`. Not `Sendable`: one thread at a time (``GlyphService`` locks around it).
final class FontFace {
    /// The size glyph ranges are rendered at.
    static let pixelSize = 24

    let path: String
    /// `family style`, as MapLibre styles name fonts (`DejaVu Sans Bold`, `Noto Sans Regular`).
    let name: String
    private let face: OpaquePointer  // struct cft_face: an FT_Library and its FT_Face
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
        try SharedLibrary.freetype.load()  // opened the first time a font is (it is not linked)
        // Never a FIFO or a device: FreeType would wait in open(2) for ever, holding a server thread.
        let file: RegularFile
        do { file = try RegularFile(forReadingAtPath: path) } catch { throw GlyphError.fontUnreadable(path: path, reason: error.reason) }
        let size = UInt(clamping: file.size)
        var opened: OpaquePointer?
        switch cft_open_face_descriptor(file.take(), size, index, UInt32(Self.pixelSize), &opened) {
        case CFT_OPENED: break
        case CFT_NOT_STARTED: throw GlyphError.fontUnreadable(path: path, reason: L.localized("FreeType did not start"))
        case CFT_NOT_SCALABLE: throw GlyphError.fontUnreadable(path: path, reason: L.localized("not scalable to %1$s px", "\(Self.pixelSize)"))
        default: throw GlyphError.fontUnreadable(path: path, reason: L.localized("not a font FreeType can read"))
        }
        guard let opened else { throw GlyphError.fontUnreadable(path: path, reason: L.localized("FreeType did not start")) }
        self.path = path
        face = opened
        let info = cft_face_info(opened)
        let family = info.family_name.map { String(cString: $0) } ?? PathText.lastComponent(path)
        let style = info.style_name.map { String(cString: $0) } ?? "Regular"
        name = "\(family) \(style)"
        ascender = info.ascender
        faceCount = max(1, info.face_count)
    }

    /// How many faces the file holds (more than one in a collection).
    let faceCount: Int

    deinit {
        cft_close_face(face)
    }

    func hasGlyph(_ codePoint: UInt32) -> Bool {
        cft_char_index(face, UInt(codePoint)) != 0
    }

    /// Renders `codePoint`, or nil when the font has no glyph for it (or FreeType fails on it).
    func render(_ codePoint: UInt32) -> Rendered? {
        let index = cft_char_index(face, UInt(codePoint))
        var glyph = cft_glyph()
        guard index != 0, cft_render_glyph(face, index, &glyph) == 0 else { return nil }
        let width = Int(glyph.width)
        let height = Int(glyph.rows)
        var coverage = [UInt8](repeating: 0, count: width * height)
        if width > 0, height > 0, let buffer = glyph.buffer, glyph.is_gray != 0 {
            let pitch = Int(glyph.pitch)
            for row in 0..<height {
                let start = pitch >= 0 ? row * pitch : (height - 1 - row) * -pitch
                for column in 0..<width { coverage[row * width + column] = buffer[start + column] }
            }
        }
        return Rendered(
            coverage: coverage, width: width, height: height, left: Int(glyph.left),
            top: Int(glyph.top) - ascender, advance: Int((glyph.advance_x + 32) >> 6))
    }
}

extension FontFace.Rendered {
    /// One image of `glyphs` drawn side by side on one baseline, left to right, each after the
    /// previous one's advance (a zero-width mark over the glyph that follows it): how the glyph
    /// server draws a presentation form from the letters it stands for.
    init(sideBySide glyphs: [FontFace.Rendered]) {
        var origins: [Int] = []
        var pen = 0
        for glyph in glyphs {
            origins.append(pen)
            pen += glyph.advance
        }
        let drawn = glyphs.indices.filter { glyphs[$0].width > 0 && glyphs[$0].height > 0 }
        guard !drawn.isEmpty else {
            self.init(coverage: [], width: 0, height: 0, left: 0, top: glyphs.first?.top ?? 0, advance: pen)
            return
        }
        let minX = drawn.map { origins[$0] + glyphs[$0].left }.min()!
        let maxX = drawn.map { origins[$0] + glyphs[$0].left + glyphs[$0].width }.max()!
        let maxTop = drawn.map { glyphs[$0].top }.max()!
        let minBottom = drawn.map { glyphs[$0].top - glyphs[$0].height }.min()!
        let width = maxX - minX
        let height = maxTop - minBottom
        var coverage = [UInt8](repeating: 0, count: width * height)
        for index in drawn {
            let glyph = glyphs[index]
            let rowOffset = maxTop - glyph.top
            let columnOffset = origins[index] + glyph.left - minX
            for row in 0..<glyph.height {
                for column in 0..<glyph.width {
                    let target = (rowOffset + row) * width + columnOffset + column
                    coverage[target] = max(coverage[target], glyph.coverage[row * glyph.width + column])
                }
            }
        }
        self.init(coverage: coverage, width: width, height: height, left: minX, top: maxTop, advance: pen)
    }
}

/// Crosses threads only inside its own ``Locked`` in ``GlyphService`` (`Locked<FontFace>`), which
/// lets one thread at a time use the FreeType face: the face is never touched outside `withLock`.
extension FontFace: @unchecked Sendable {}
