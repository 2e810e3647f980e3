import Foundation
import MapGate
import TestSupport
import Testing

/// Issue 41: the right-to-left text plugin asks for Arabic presentation forms whatever the font
/// holds. A font without them (here DejaVu Sans cut by fontTools' subsetter to U+0020–U+06FF:
/// every Arabic letter, no form in its character map) used to leave a gap for each letter; the
/// glyph server now draws the letters a form stands for.
@Suite struct GlyphFallbackTests {
    static let python = PMTilesReference.pythonPath

    /// DejaVu Sans without its presentation forms, in a folder of its own.
    static func fontWithoutForms() throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        let result = try runProcess(
            "/usr/bin/python3",
            ["-m", "fontTools.subset", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "--unicodes=U+0020-06FF", "--output-file=\(folder.path)/cut.ttf"],
            environment: ["PYTHONPATH": python])
        #expect(result.status == 0, "fontTools.subset (scripts/install-deps unpacks it): \(result.stderr)")
        return folder
    }

    static func glyphs(_ service: GlyphService, _ range: String) throws -> [UInt32: GlyphProtobuf.Glyph] {
        let stack = try #require(try GlyphProtobuf.decode(service.glyphs(fontstack: "DejaVu Sans Book", range: range)).first)
        return Dictionary(stack.glyphs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func aFormTheFontLacksIsDrawnFromItsLetter() throws {
        let folder = try Self.fontWithoutForms()
        let service = GlyphService(library: FontLibrary(folders: [folder.path]))
        #expect(service.library.names == ["DejaVu Sans Book"])
        let arabic = try Self.glyphs(service, "1536-1791")
        let forms = try Self.glyphs(service, "65024-65279")
        let lam = try #require(arabic[0x0644])
        let alef = try #require(arabic[0x0627])
        // Lam's initial form and alef's final form: the letters' own glyphs, bit for bit.
        for (form, letter) in [(UInt32(0xFEDF), lam), (0xFEE0, lam), (0xFE8E, alef), (0xFE8D, alef)] {
            let glyph = try #require(forms[form], "U+\(String(form, radix: 16)) is missing")
            #expect(glyph.bitmap == letter.bitmap && glyph.width == letter.width && glyph.advance == letter.advance)
            #expect(glyph.left == letter.left && glyph.top == letter.top)
        }
        // The lam-alef ligature: alef on the left, lam on its right, one advance for both.
        let ligature = try #require(forms[0xFEFB])
        #expect(ligature.advance == lam.advance + alef.advance)
        #expect(ligature.width >= max(lam.width, alef.width) && ligature.width <= lam.advance + alef.advance + 2)
        #expect(ligature.height == max(lam.height, alef.height), "\(ligature.height) \(lam.height) \(alef.height)")
        // What is neither in the font nor a presentation form stays out (variation selectors).
        #expect(forms[0xFE00] == nil)
        #expect(forms[0xFEFF] == nil || forms[0xFEFF]?.width == 0)
    }

    /// The whole font keeps its own joined forms: the fallback never replaces a glyph a font has.
    @Test func aFontWithTheFormsKeepsItsOwn() throws {
        let folder = try Self.fontWithoutForms()
        let whole = GlyphService(library: FontLibrary(folders: ["/usr/share/fonts/truetype/dejavu"]))
        let cut = GlyphService(library: FontLibrary(folders: [folder.path]))
        let own = try #require(try Self.glyphs(whole, "65024-65279")[0xFEDF])
        let drawn = try #require(try Self.glyphs(cut, "65024-65279")[0xFEDF])
        #expect(own.bitmap != drawn.bitmap, "DejaVu Sans's initial lam is its own glyph")
    }

    /// `ArabicPresentationForms+Table.swift` is what `scripts/generate-presentation-forms` writes
    /// from this machine's Unicode data: never edited by hand.
    @Test func theTableIsWhatTheScriptWrites() throws {
        let folder = try TemporaryDirectory()
        let output = folder.path + "/table.swift"
        let result = try runProcess(TestPaths.repository + "/scripts/generate-presentation-forms", [output])
        #expect(result.status == 0, "\(result.stderr)")
        let committed = try Data(contentsOf: URL(fileURLWithPath: TestPaths.repository + "/Sources/MapGateServer/Glyphs/ArabicPresentationForms+Table.swift"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == committed, "re-run scripts/generate-presentation-forms")
    }
}
