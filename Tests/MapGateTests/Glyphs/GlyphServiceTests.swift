import Foundation
import MapGate
import TestSupport
import Testing

/// Glyph ranges made from the fonts on this machine (`fonts-dejavu-core`, which install-deps
/// installs), decoded field by field from the protobuf.
@Suite struct GlyphServiceTests {
    static let font = "DejaVu Sans Book"
    let service = GlyphService(library: FontLibrary(folders: FontLibrary.systemFolders))

    @Test func theSystemFontsAreFoundByName() throws {
        #expect(service.library.names.contains(Self.font), "\(service.library.names.prefix(20))")
    }

    @Test func aLatinRangeHoldsItsGlyphsWithPlausibleDistanceFields() throws {
        let data = try service.glyphs(fontstack: Self.font, range: "0-255")
        let stacks = try GlyphProtobuf.decode(data)
        let stack = try #require(stacks.first)
        #expect(stacks.count == 1)
        #expect(stack.name == Self.font)
        #expect(stack.range == "0-255")
        let byID = Dictionary(uniqueKeysWithValues: stack.glyphs.map { ($0.id, $0) })
        for letter in "AZaz09,." {
            #expect(byID[letter.unicodeScalars.first!.value] != nil, "no glyph for \(letter)")
        }
        let a = try #require(byID[65])
        // 24 px: a capital is about 17 px tall; the bitmap carries a 3 px buffer on each side.
        #expect((12...22).contains(a.height), "height \(a.height)")
        #expect((10...20).contains(a.width), "width \(a.width)")
        #expect(a.bitmap.count == (a.width + 6) * (a.height + 6))
        #expect(a.advance > a.width / 2)
        #expect(a.top < 0 && a.top > -24, "top \(a.top)")
        // The distance field: far outside is low, the stem of an "l" is high.
        #expect(a.bitmap.first! < 100 && a.bitmap.last! < 100)
        let l = try #require(byID[108])
        let middle = (l.height / 2 + 3) * (l.width + 6) + (l.width + 6) / 2
        #expect(l.bitmap[middle] > 192, "\(l.bitmap[middle])")
        // A space has an advance and no bitmap.
        let space = try #require(byID[32])
        #expect(space.width == 0 && space.bitmap.isEmpty && space.advance > 0)
    }

    @Test func aFontstackFallsBackFontByFontAndIsCached() throws {
        let first = try service.glyphs(fontstack: "No Such Font, \(Self.font)", range: "256-511")
        #expect(try GlyphProtobuf.decode(first).first?.glyphs.isEmpty == false)
        #expect(try service.glyphs(fontstack: "No Such Font, \(Self.font)", range: "256-511") == first)
    }

    /// Issue 27: a style whose fonts are not on this machine (`Open Sans Regular`, `Arial Unicode
    /// MS Regular`, MapLibre's usual default) got 404 for every range, and MapLibre then drew no
    /// tile at all. The stack is answered with the fallback fonts, under the name it was asked by.
    @Test func aStackWithNoInstalledFontIsAnsweredWithTheFallbacks() throws {
        let stack = "Open Sans Regular,Arial Unicode MS Regular"
        let answer = try service.answer(fontstack: stack, range: "0-255")
        #expect(answer.requested.isEmpty)
        #expect(answer.fallback.first == Self.font, "\(answer.fallback)")
        let decoded = try #require(try GlyphProtobuf.decode(answer.data).first)
        #expect(decoded.name == stack)
        #expect(decoded.glyphs.contains { $0.id == 65 })
    }

    /// A stack whose first font is missing is answered under the name asked (`No Such Font,X`),
    /// the installed font first and the fallbacks after it.
    @Test func aStackIsAnsweredUnderTheNameItWasAskedBy() throws {
        let stack = "No Such Font,\(Self.font)"
        let answer = try service.answer(fontstack: stack, range: "0-255")
        #expect(answer.requested == [Self.font])
        #expect(!answer.fallback.contains(Self.font))
        #expect(try GlyphProtobuf.decode(answer.data).first?.name == stack)
    }

    /// Han and Hangul ranges, which DejaVu lacks, come from a CJK font installed as a fallback
    /// (`fonts-wqy-microhei`, which install-deps installs).
    @Test func aScriptTheStacksFontLacksComesFromAFallback() throws {
        let han = try service.answer(fontstack: Self.font, range: "28416-28671")  // 漢 is U+6F22
        let glyphs = try #require(try GlyphProtobuf.decode(han.data).first).glyphs
        #expect(glyphs.contains { $0.id == 0x6F22 && !$0.bitmap.isEmpty }, "fallbacks: \(han.fallback)")
    }

    /// A client asking for every order of every font, every range, cannot fill the memory: the
    /// cache holds at most its limit.
    @Test func theCacheIsBoundedWhateverClientsAskFor() throws {
        let bounded = GlyphService(library: service.library, cacheLimit: 4)
        let fonts = service.library.names.filter { $0.hasPrefix("DejaVu") }.prefix(3)
        for first in fonts {
            for second in fonts where second != first {
                _ = try bounded.glyphs(fontstack: "\(first),\(second)", range: "0-255")
                #expect(bounded.cachedRanges <= 4)
            }
        }
        #expect(bounded.cachedRanges >= 1)
        // A fontstack of a hundred names looks at the first eight only (then at the fallbacks).
        let long = Array(repeating: "No Such Font", count: 99).joined(separator: ",") + ",\(Self.font)"
        let answer = try bounded.answer(fontstack: long, range: "0-255")
        #expect(answer.requested.isEmpty)
        #expect(!answer.fallback.isEmpty)
    }

    /// Made-up font names are all drawn by the fallback fonts: each new one is answered from the
    /// range drawn once, under its own name (found by an attack: every new name, which any web page
    /// can ask for, drew the whole range again, 55–150 ms of CPU, and 256 emptied the cache).
    @Test func newNamesForTheSameFontsAreNotDrawnAgain() throws {
        let fresh = GlyphService(library: service.library)
        let first = try fresh.answer(fontstack: "Made Up 0", range: "0-255")
        for index in 1..<20 {
            let answer = try fresh.answer(fontstack: "Made Up \(index)", range: "0-255")
            let decoded = try #require(try GlyphProtobuf.decode(answer.data).first)
            #expect(decoded.name == "Made Up \(index)")
            #expect(decoded.glyphs.map(\.bitmap) == (try GlyphProtobuf.decode(first.data).first?.glyphs.map(\.bitmap)))
        }
        #expect(fresh.cachedRanges == 1)
        // A font named twice or more is the font once (found by the attack on this fix).
        for count in 2...5 {
            let stack = Array(repeating: Self.font, count: count).joined(separator: ",")
            #expect(try GlyphProtobuf.decode(try fresh.glyphs(fontstack: stack, range: "0-255")).first?.name == stack)
        }
        // (DejaVu Sans Book is the first fallback: every stack above is drawn by the same fonts.)
        #expect(fresh.cachedRanges == 1, "each repetition drew the range again")
    }

    @Test func aRangeWithoutGlyphsInTheFontIsEmptyNotAnError() throws {
        let hangul = try service.glyphs(fontstack: Self.font, range: "44032-44287")
        #expect(try GlyphProtobuf.decode(hangul).first?.range == "44032-44287")
    }

    @Test(arguments: ["1-256", "0-254", "65536-65791", "a-b", "0", "-255"])
    func aBadRangeIsRefused(range: String) {
        #expect(throws: GlyphError.badRange(range)) { try service.glyphs(fontstack: Self.font, range: range) }
    }

    /// Only a machine with no font at all refuses a stack.
    @Test func withNoFontAtAllAStackIsRefused() throws {
        let empty = try TemporaryDirectory()
        let none = GlyphService(library: FontLibrary(folders: [empty.path]))
        let error = #expect(throws: GlyphError.self) { try none.glyphs(fontstack: "Comic Nope", range: "0-255") }
        #expect(error?.localizedDescription.contains("Comic Nope") == true, "\(String(describing: error))")
    }
}

/// A decoder of MapLibre's glyph protobuf, written from its schema (glyphs.proto): `glyphs { repeated
/// fontstack stacks = 1 }`, `fontstack { name = 1; range = 2; repeated glyph glyphs = 3 }`, `glyph {
/// uint32 id = 1; bytes bitmap = 2; uint32 width = 3, height = 4; sint32 left = 5, top = 6; uint32
/// advance = 7 }`.
enum GlyphProtobuf {
    struct Stack {
        var name = ""
        var range = ""
        var glyphs: [Glyph] = []
    }

    struct Glyph {
        var id: UInt32 = 0
        var bitmap: [UInt8] = []
        var width = 0
        var height = 0
        var left = 0
        var top = 0
        var advance = 0
    }

    struct Malformed: Error {}

    static func decode(_ data: Data) throws -> [Stack] {
        try fields(Array(data)).compactMap { field, value in
            guard field == 1, case .bytes(let bytes) = value else { return nil }
            var stack = Stack()
            for (field, value) in try fields(bytes) {
                switch (field, value) {
                case (1, .bytes(let text)): stack.name = String(decoding: text, as: UTF8.self)
                case (2, .bytes(let text)): stack.range = String(decoding: text, as: UTF8.self)
                case (3, .bytes(let message)): stack.glyphs.append(try glyph(message))
                default: throw Malformed()
                }
            }
            return stack
        }
    }

    private static func glyph(_ bytes: [UInt8]) throws -> Glyph {
        var glyph = Glyph()
        for (field, value) in try fields(bytes) {
            switch (field, value) {
            case (1, .varint(let n)): glyph.id = UInt32(n)
            case (2, .bytes(let b)): glyph.bitmap = b
            case (3, .varint(let n)): glyph.width = Int(n)
            case (4, .varint(let n)): glyph.height = Int(n)
            case (5, .varint(let n)): glyph.left = zigzag(n)
            case (6, .varint(let n)): glyph.top = zigzag(n)
            case (7, .varint(let n)): glyph.advance = Int(n)
            default: throw Malformed()
            }
        }
        return glyph
    }

    private static func zigzag(_ n: UInt64) -> Int { Int(Int64(bitPattern: (n >> 1) ^ (0 &- (n & 1)))) }

    enum Value {
        case varint(UInt64)
        case bytes([UInt8])
    }

    private static func fields(_ bytes: [UInt8]) throws -> [(Int, Value)] {
        var index = 0
        func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else { throw Malformed() }
                let byte = bytes[index]
                index += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return result }
                shift += 7
            }
        }
        var out: [(Int, Value)] = []
        while index < bytes.count {
            let key = try varint()
            switch key & 7 {
            case 0: out.append((Int(key >> 3), .varint(try varint())))
            case 2:
                let length = Int(try varint())
                guard length >= 0, index + length <= bytes.count else { throw Malformed() }
                out.append((Int(key >> 3), .bytes(Array(bytes[index..<(index + length)]))))
                index += length
            default: throw Malformed()
            }
        }
        return out
    }
}

extension GlyphServiceTests {
    static let cjkFont = "WenQuanYi Micro Hei Regular"

    /// The seeds' storefronts are cn, jp and kr: Chinese, Japanese and Korean names need glyphs
    /// from a font that has them, after the Latin one (fontstack fallback), here from a font
    /// collection (`.ttc`). Cyrillic and Arabic come from DejaVu itself.
    @Test(arguments: ["北", "東", "한", "Ж", "ب"])
    func otherScriptsFindTheirGlyphs(character: String) throws {
        try #require(service.library.names.contains(Self.cjkFont), "\(Self.cjkFont) (fonts-wqy-microhei, which scripts/install-deps installs)")
        let codePoint = character.unicodeScalars.first!.value
        let rangeStart = Int(codePoint) / 256 * 256
        let data = try service.glyphs(fontstack: "\(Self.font),\(Self.cjkFont)", range: "\(rangeStart)-\(rangeStart + 255)")
        let glyph = try #require(try GlyphProtobuf.decode(data).first?.glyphs.first { $0.id == codePoint }, "no glyph for \(character)")
        #expect(glyph.width > 4 && glyph.height > 4)
        #expect(glyph.bitmap.count == (glyph.width + 6) * (glyph.height + 6))
        #expect(glyph.bitmap.contains { $0 > 192 }, "no pixel inside the outline")
    }

    @Test func theLabelFontstackAddsFontsForOtherScripts() {
        let fonts = VectorStyle.labelFonts(among: service.library.names)
        #expect(fonts.first == Self.font)
        #expect(fonts.contains(Self.cjkFont))
        #expect(VectorStyle.labelFonts(among: []).isEmpty)
    }
}
