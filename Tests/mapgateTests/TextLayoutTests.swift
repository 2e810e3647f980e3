import MapGate
import Testing

@testable import mapgate

/// ``TextLayout``: running text wrapped as each of the users' languages breaks its lines.
@Suite struct TextLayoutTests {
    /// Every line fits, and the lines hold the text's characters, each once, in order: nothing is
    /// lost or doubled at a break but the spaces there.
    func expectFits(_ text: String, width: Int, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let lines = TextLayout.wrapped(text, width: width)
        #expect(lines.allSatisfy { TerminalText.width($0) <= width && !$0.hasPrefix(" ") && !$0.hasSuffix(" ") }, "\(lines)", sourceLocation: sourceLocation)
        #expect(lines.joined().filter { $0 != " " } == text.filter { $0 != " " }, "\(lines)", sourceLocation: sourceLocation)
        return lines
    }

    @Test func englishBreaksAtSpacesOnly() {
        let text = "With --from, reads the catalog and packages from a mirror instead (a folder written by 'mapgate mirror')."
        let lines = expectFits(text, width: 40)
        #expect(lines.joined(separator: " ") == text)
        #expect(lines == ["With --from, reads the catalog and", "packages from a mirror instead (a", "folder written by 'mapgate mirror')."])
    }

    /// Japanese and Chinese break between characters, never before "。", "、", "）" or a small
    /// kana, nor after "（" or "「" (kinsoku).
    @Test func chineseAndJapaneseBreakBetweenCharactersButNotAtTheirPunctuation() {
        let texts = [
            "インストール済みのファイルをアトミックに置き換えます。アップデートの要件の使用 1 回に当たり、地域やスタイルがインストール、更新、修復されたときだけ数えられます（何もインストールしない実行は数えられません）。",
            "使用 --from 时，改从镜像读取目录和数据包（由“mapgate mirror”写出的文件夹，或“mapgate serve --share”的地址），并像对待发布者一样检查：签名、序号、过期时间、大小与哈希值。",
        ]
        for text in texts {
            for width in 8...41 {
                let lines = expectFits(text, width: width)
                for (line, next) in zip(lines, lines.dropFirst()) {
                    #expect(!"（「“".contains(line.last!), "\(width): \(line) | \(next)")
                    #expect(!"。、，）」”：ッャュョ".contains(next.first!), "\(width): \(line) | \(next)")
                }
            }
        }
        // A break between two kanji needs no space, and gets none.
        #expect(TextLayout.wrapped("地域名を指定すると", width: 10) == ["地域名を指", "定すると"])
    }

    /// Korean puts spaces between words and breaks there, as English does, though its letters
    /// are wide.
    @Test func koreanBreaksAtSpaces() {
        let lines = expectFits("지역 이름을 주면 그 지역을 설치하거나 업데이트하고, 주지 않으면 설치된 모든 지역을 업데이트합니다.", width: 24)
        #expect(lines == ["지역 이름을 주면 그", "지역을 설치하거나", "업데이트하고, 주지", "않으면 설치된 모든", "지역을 업데이트합니다."])
    }

    /// A word wider than the line (a path) is cut after a "/", else where it must be.
    @Test func aWordWiderThanTheLineIsCutAfterASlash() {
        #expect(TextLayout.wrapped("(else $XDG_CONFIG_HOME/mapgate/config.json)", width: 30) == ["(else", "$XDG_CONFIG_HOME/mapgate/", "config.json)"])
        #expect(TextLayout.wrapped("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
    }

    /// An option and its meaning: beside the name, wrapped under the meaning's column; under the
    /// name on a narrow terminal; on the next line when the name reaches the column.
    @Test func anItemKeepsItsMeaningInItsColumn() {
        #expect(
            TextLayout.item("--from MIRROR", "sync from a mirror: a folder, or http://HOST:PORT of a 'serve --share'", column: 22, width: 60) == [
                "  --from MIRROR       sync from a mirror: a folder, or",
                "                      http://HOST:PORT of a 'serve --share'",
            ])
        #expect(TextLayout.item("--from MIRROR", "sync from a mirror: a folder", column: 22, width: 40) == ["  --from MIRROR", "      sync from a mirror: a folder"])
        #expect(TextLayout.item("system-service", "run the system service", column: 12, width: 60) == ["  system-service", "            run the system service"])
    }
}
