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
}
