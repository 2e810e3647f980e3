import FoundationEssentials
import MapGateBase

/// Answers MapLibre's glyph requests (`/fonts/{fontstack}/{start}-{end}.pbf`) from the fonts of a
/// ``FontLibrary``: for each of the range's 256 code points the first font of the fontstack that
/// has it is rendered at 24 px, turned into a signed distance field (buffer 3, radius 8, cutoff
/// 0.25, as fontnik and martin make them) and written in MapLibre's glyph protobuf format (an
/// Arabic presentation form that no font has is drawn from its letters: ``ArabicPresentationForms``). Each
/// range is made once and kept in memory, up to ``cacheLimit`` ranges (a client asking for every
/// order of every font cannot fill the memory: past the limit the cache starts afresh). Safe to
/// share between threads.
public final class GlyphService: Sendable {
    /// Fonts of a fontstack looked at; the rest of a longer list is ignored.
    public static let maximumFonts = 8
    /// Ranges kept in memory at most (a Latin range is about 90 KB).
    public let cacheLimit: Int
    private let folders: [String]
    /// Found on first use: looking through the font folders opens every font file (outside the
    /// lock: no request waits on another's file I/O).
    private let found = Locked<FontLibrary?>(nil)
    private let cache = Locked<[String: Data]>([:])
    /// Opened fonts by location; each FreeType face is used under its own lock, so a request
    /// rendering with one font holds up only those using the same font.
    private let faces = Locked<[FontLibrary.Location: Locked<FontFace>]>([:])

    /// - Parameter folders: where fonts are looked for (the user's `fontPaths`, then
    ///   ``FontLibrary/systemFolders``), on first use.
    public init(folders: [String], cacheLimit: Int = 256) {
        self.folders = folders
        self.cacheLimit = max(1, cacheLimit)
    }

    public init(library: FontLibrary, cacheLimit: Int = 256) {
        folders = []
        self.cacheLimit = max(1, cacheLimit)
        found.withLock { $0 = library }
    }

    #if DEBUG
    /// How many ranges are kept in memory now. For the tests: debug builds only.
    public var cachedRanges: Int { cache.withLock { $0.count } }
    #endif

    /// The fonts found.
    public var library: FontLibrary {
        if let library = found.withLock({ $0 }) { return library }
        // Two first requests may both look; the first to finish is kept.
        let made = FontLibrary(folders: folders)
        return found.withLock { library in
            if let library { return library }
            library = made
            return made
        }
    }

    /// The protobuf of one glyph range.
    ///
    /// - Parameters:
    ///   - fontstack: font names separated by commas, tried in order for each code point.
    ///   - range: `START-END`, START a multiple of 256, END = START + 255.
    public func glyphs(fontstack: String, range: String) throws -> Data {
        try answer(fontstack: fontstack, range: range).data
    }

    /// One glyph range and the fonts it was made with.
    public struct Answer: Sendable {
        public var data: Data
        /// The installed fonts of the requested stack that were used.
        public var requested: [String]
        /// The fallback fonts added after them (for code points the stack's fonts lack, or for
        /// every code point when none of them is installed): see ``fallbackFonts``.
        public var fallback: [String]
    }

    /// Fonts tried after a stack's own, in this order, where installed: a stack whose fonts are not
    /// on this machine (MapLibre styles' usual `Open Sans Regular`, `Arial Unicode MS Regular`)
    /// still gets its labels, and a script its own fonts lack (Hangul, Han, Arabic) still shows.
    public static let preferredFallbacks = [
        "DejaVu Sans Book", "Noto Sans Regular", "Noto Sans CJK SC Regular", "Noto Sans CJK KR Regular", "Noto Sans CJK JP Regular",
        "WenQuanYi Micro Hei Regular", "Noto Sans Arabic Regular", "Noto Naskh Arabic Regular", "DejaVu Sans Bold",
    ]

    /// The installed fallback fonts, in ``preferredFallbacks`` order (then any other installed
    /// font, so that some font always answers), at most ``maximumFonts``.
    public var fallbackFonts: [String] {
        let fonts = library.fonts
        let preferred = Self.preferredFallbacks.filter { fonts[$0] != nil }
        return Array((preferred + library.names.filter { !preferred.contains($0) }).prefix(Self.maximumFonts))
    }

    /// The protobuf of one glyph range, made from the stack's installed fonts followed by the
    /// fallback fonts: a stack is always answered (under the name it was asked by), never 404
    /// because its fonts are missing. Only a machine with no font at all answers ``GlyphError/unknownFont(name:available:)``.
    public func answer(fontstack: String, range: String) throws -> Answer {
        let start = try Self.parseRange(range)
        // Without FreeType no font was found either: say why rather than "unknown font".
        try SharedLibrary.freetype.load()
        let names = Array(fontstack.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }.prefix(Self.maximumFonts))
        let fonts = library.fonts
        // Each font once: a stack naming one font twice draws what it draws once, and is kept
        // so (found by an attack: `A,A,…` drew the range again for every repetition).
        var seen: Set<String> = []
        let requested = names.filter { fonts[$0] != nil && seen.insert($0).inserted }
        let fallback = fallbackFonts.filter { !requested.contains($0) }
        let used = Array((requested + fallback).prefix(Self.maximumFonts))
        guard !used.isEmpty else { throw GlyphError.unknownFont(name: fontstack, available: library.names) }
        let locations = used.compactMap { fonts[$0] }
        let usedFallback = Array(used.dropFirst(requested.count))
        // Kept by the fonts drawn with, not the name asked by: a stack of names this machine
        // lacks is drawn by the fallback fonts whatever they are, and each new name cost a whole
        // range drawn again (found by an attack: 20 made-up names took 1.35 s of CPU, asked by
        // any web page, and 256 emptied the cache). The name goes in as each answer is made.
        let key = locations.map { "\($0.path)#\($0.index)" }.joined(separator: "\n") + "\n\(start)"
        let glyphs: Data
        if let cached = cache.withLock({ $0[key] }) {
            glyphs = cached
        } else {
            glyphs = Self.drawn(start: start, faces: try locations.map(face(at:)))
            cache.withLock { cache in
                if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[key] = glyphs
            }
        }
        return Answer(data: Self.encode(fontstack: fontstack, start: start, glyphs: glyphs), requested: requested, fallback: usedFallback)
    }

    /// The opened font at `location`, opened now (outside any shared lock) when it is not yet.
    private func face(at location: FontLibrary.Location) throws -> Locked<FontFace> {
        if let face = faces.withLock({ $0[location] }) { return face }
        let opened = Locked(try FontFace(path: location.path, index: location.index))
        return faces.withLock { faces in
            if let face = faces[location] { return face }
            faces[location] = opened
            return opened
        }
    }

    /// The range's first code point; throws for anything but `START-(START+255)`.
    static func parseRange(_ text: String) throws -> UInt32 {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = UInt32(parts[0]), let end = UInt32(parts[1]), start % 256 == 0, end == start + 255, end <= 65_535
        else { throw GlyphError.badRange(text) }
        return start
    }

    /// The glyph range's protobuf: the stack's name and range, then its `glyphs` (``drawn(start:faces:)``).
    private static func encode(fontstack: String, start: UInt32, glyphs: Data) -> Data {
        var writer = ProtobufWriter()
        writer.message(1) { stack in
            stack.string(1, fontstack)
            stack.string(2, "\(start)-\(start + 255)")
            stack.append(encoded: glyphs)
        }
        return Data(writer.bytes)
    }

    /// The range's glyphs drawn from `faces`, as the encoded `glyphs` fields of a font stack.
    private static func drawn(start: UInt32, faces: [Locked<FontFace>]) -> Data {
        var stack = ProtobufWriter()
        for codePoint in start...(start + 255) {
            guard let glyph = render(codePoint, faces: faces) else { continue }
            stack.message(3) { message in
                message.varint(1, UInt64(codePoint))
                if glyph.width > 0, glyph.height > 0 {
                    message.bytes(2, SignedDistanceField.make(coverage: glyph.coverage, width: glyph.width, height: glyph.height))
                }
                message.varint(3, UInt64(glyph.width))
                message.varint(4, UInt64(glyph.height))
                message.signed(5, Int32(glyph.left))
                message.signed(6, Int32(glyph.top))
                message.varint(7, UInt64(max(0, glyph.advance)))
            }
        }
        return Data(stack.bytes)
    }

    /// `codePoint` from the first face that has it; for an Arabic presentation form no face has,
    /// the letters it stands for side by side, right to left, from the first face that has them all
    /// (the right-to-left text plugin asks for forms whatever the font holds).
    private static func render(_ codePoint: UInt32, faces: [Locked<FontFace>]) -> FontFace.Rendered? {
        if let face = faces.first(where: { $0.withLock { $0.hasGlyph(codePoint) } }) {
            return face.withLock { $0.render(codePoint) }
        }
        guard let letters = ArabicPresentationForms.letters(of: codePoint),
            let face = faces.first(where: { $0.withLock { face in letters.allSatisfy(face.hasGlyph) } })
        else { return nil }
        return face.withLock { face in
            let glyphs = letters.reversed().compactMap(face.render)
            return glyphs.count == letters.count ? FontFace.Rendered(sideBySide: glyphs) : nil
        }
    }
}
