import Foundation
import TestSupport
import Testing

import MapGate
@testable import MapGateServer

/// The viewer's language from `Accept-Language` (issue 29), and the catalogs the server reads
/// itself (``MessageCatalog``), checked against catalogs `msgfmt` compiles.
@Suite struct PageLanguageTests {
    static let catalogs = [
        "zh_CN": MessageCatalog(messages: ["Styles": "样式"]), "zh_TW": MessageCatalog(messages: ["Styles": "樣式"]),
        "ja": MessageCatalog(messages: ["Styles": "スタイル"]), "ko": MessageCatalog(messages: ["Styles": "스타일"]),
    ]

    @Test(arguments: [
        ("ja", "ja"), ("ja-JP,ja;q=0.9,en-US;q=0.8", "ja"), ("en-US,en;q=0.9,ja;q=0.8", "en"), ("fr, zh-TW;q=0.8, ja;q=0.5", "zh-TW"),
        ("zh-HK", "zh-TW"), ("zh-Hant", "zh-TW"), ("zh-Hans-CN", "zh-CN"), ("zh", "zh-CN"), ("zh-SG", "zh-CN"), ("ko-KR", "ko"),
        ("ja;q=0, ko", "ko"), ("de", "en"), ("*", "en"), ("", "en"), ("ja;q=0.2, ko;q=0.7", "ko"), ("JA", "ja"),
    ])
    func negotiates(header: String, tag: String) {
        #expect(PageLanguage.negotiate(header, catalogs: Self.catalogs).tag == tag)
    }

    @Test func withoutACatalogTheLanguageIsEnglish() {
        #expect(PageLanguage.negotiate("ja", catalogs: [:]).tag == "en")
        #expect(PageLanguage.negotiate(nil, catalogs: Self.catalogs).tag == "en")
        #expect(PageLanguage.negotiate("ko", catalogs: Self.catalogs).localized("Styles") == "스타일")
        #expect(PageLanguage.english.localized("Region %1$s is not installed.", "x") == "Region x is not installed.")
    }

    /// A catalog msgfmt compiles (plural forms, a context, escapes, UTF-8) reads back as written;
    /// a file that is not one is refused, not half read.
    @Test func readsWhatMsgfmtCompiles() throws {
        let work = try TemporaryDirectory()
        let po = """
            msgid ""
            msgstr ""
            "Content-Type: text/plain; charset=UTF-8\\n"
            "Plural-Forms: nplurals=1; plural=0;\\n"

            msgid "Zoom in"
            msgstr "拡大"

            msgid "one %d use"
            msgid_plural "%d uses"
            msgstr[0] "%d 回"

            msgid "line\\none \\"quoted\\""
            msgstr "行\\n「引用」"

            msgid "untranslated"
            msgstr ""
            """
        try po.write(toFile: work.file("ja.po"), atomically: true, encoding: .utf8)
        let compiled = try runProcess("/usr/bin/msgfmt", ["-o", work.file("ja.mo"), work.file("ja.po")])
        #expect(compiled.status == 0, "\(compiled.stderr)")
        let catalog = try #require(MessageCatalog(path: work.file("ja.mo")))
        #expect(catalog.messages == ["Zoom in": "拡大", "one %d use": "%d 回", "line\none \"quoted\"": "行\n「引用」"])
        try Data("not a catalog at all, but long enough".utf8).write(to: URL(fileURLWithPath: work.file("bad.mo")))
        #expect(MessageCatalog(path: work.file("bad.mo")) == nil)
        #expect(MessageCatalog(path: work.file("missing.mo")) == nil)
        var truncated = try Data(contentsOf: URL(fileURLWithPath: work.file("ja.mo")))
        truncated.removeLast(truncated.count / 2)
        try truncated.write(to: URL(fileURLWithPath: work.file("cut.mo")))
        #expect(MessageCatalog(path: work.file("cut.mo")) == nil)
    }
}
