/// Full-width forms of ASCII (U+FF01–U+FF5E, a fixed offset from U+0021–U+007E) and the
/// ideographic space (U+3000), as a Chinese, Japanese or Korean input method types letters,
/// digits and spaces: read as the ASCII the user meant where a command line wants ASCII (a
/// region's id, a tile's coordinates), never in what a client sends over HTTP.
public enum FullWidth {
    public static func ascii(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            var value = scalar.value
            if (0xFF01...0xFF5E).contains(value) { value -= 0xFEE0 }
            if value == 0x3000 { value = 0x20 }
            scalars.append(Unicode.Scalar(value) ?? scalar)
        }
        return String(scalars)
    }

    /// Half-width katakana (U+FF61–U+FF9F, which some Japanese input methods and older systems
    /// type) as their full-width forms, as Unicode's NFKC gives them: the voiced and semi-voiced
    /// marks as the combining U+3099 and U+309A, so that `ｶﾞ` is canonically `ガ` (and equal to it
    /// as a Swift `String`, which compares by canonical equivalence). For matching what a user
    /// typed (`ﾊｲ` is `ハイ`).
    public static func katakana(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { (0xFF61...0xFF9F).contains($0.value) }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if (0xFF61...0xFF9F).contains(scalar.value) {
                scalars.append(halfWidthKatakana[Int(scalar.value - 0xFF61)])
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// NFKC of U+FF61…U+FF9F, in order (from Python's `unicodedata`; `PromptAnswerTests` checks it).
    static let halfWidthKatakana = Array("。「」、・ヲァィゥェォャュョッーアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン\u{3099}\u{309A}".unicodeScalars)
}
