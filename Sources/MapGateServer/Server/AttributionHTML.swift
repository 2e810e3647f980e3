/// A region's `attribution` metadata is HTML from the package (TileJSON 3.0.0 says so, and
/// Leaflet shows it as HTML): it is cut down to a small allow-list before it reaches a page or
/// TileJSON. Kept: `<a>` with an `http:` or `https:` `href` (and no other attribute), `<b>`, `<i>`,
/// text and character references. Everything else is escaped, so it shows as text and never
/// runs (`<img onerror=…>`, `<script>`, `javascript:` links, event attributes).
public enum AttributionHTML {
    public static func sanitized(_ html: String) -> String {
        var output = ""
        var open: [String] = []
        var rest = Substring(html)
        while let first = rest.first {
            if first == "<", let (tag, length) = allowedTag(rest, open: open) {
                switch tag {
                case .open(let name, let markup):
                    open.append(name)
                    output += markup
                case .close(let name):
                    // Close what was opened inside it too: the output stays well nested.
                    while let last = open.popLast() {
                        output += "</\(last)>"
                        if last == name { break }
                    }
                }
                rest = rest.dropFirst(length)
            } else if first == "&", let length = characterReferenceLength(rest) {
                output += rest.prefix(length)
                rest = rest.dropFirst(length)
            } else {
                output += ViewerPage.escape(String(first))
                rest = rest.dropFirst()
            }
        }
        for name in open.reversed() { output += "</\(name)>" }
        return output
    }

    private enum Tag {
        case open(String, markup: String)
        case close(String)
    }

    /// The tag at the start of `text` when it is one the allow-list keeps, with its length.
    private static func allowedTag(_ text: Substring, open: [String]) -> (Tag, Int)? {
        guard let end = text.firstIndex(of: ">") else { return nil }
        let inside = text[text.index(after: text.startIndex)..<end]
        guard !inside.contains("<") else { return nil }
        let length = text.distance(from: text.startIndex, to: end) + 1
        if inside.hasPrefix("/") {
            let name = inside.dropFirst().trimmingSuffix(while: { $0 == " " }).lowercased()
            guard ["a", "b", "i"].contains(name), open.contains(name) else { return nil }
            return (.close(name), length)
        }
        let name = inside.prefix { $0.isLetter }.lowercased()
        let attributes = inside.dropFirst(name.count)
        switch name {
        case "b", "i":
            guard attributes.allSatisfy({ $0 == " " }) else { return nil }
            return (.open(name, markup: "<\(name)>"), length)
        case "a":
            guard attributes.isEmpty || attributes.first?.isWhitespace == true else { return nil }
            if let href = self.href(in: attributes) {
                return (.open("a", markup: "<a href=\"\(ViewerPage.escape(href))\">"), length)
            }
            return (.open("a", markup: "<a>"), length)
        default:
            return nil
        }
    }

    /// An `href` value that is an absolute http(s) URL without quotes, spaces or angle brackets.
    private static func href(in attributes: Substring) -> String? {
        guard let range = attributes.lowercased().firstRange(of: "href") else { return nil }
        let offset = attributes.lowercased().distance(from: attributes.lowercased().startIndex, to: range.upperBound)
        var rest = attributes.dropFirst(offset).drop { $0 == " " }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " }
        let value: Substring
        if let quote = rest.first, quote == "\"" || quote == "'" {
            let body = rest.dropFirst()
            guard let close = body.firstIndex(of: quote) else { return nil }
            value = body[..<close]
        } else {
            value = rest.prefix { !$0.isWhitespace }
        }
        let url = String(value).replacing("&amp;", with: "&")
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), url.count <= 2048,
            url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"\"'<>`\\".unicodeScalars.contains($0) })
        else { return nil }
        return url
    }

    /// The length of a character reference (`&copy;`, `&#169;`, `&#xA9;`) at the start of `text`.
    private static func characterReferenceLength(_ text: Substring) -> Int? {
        let body = text.dropFirst().prefix(33)
        guard let semicolon = body.firstIndex(of: ";") else { return nil }
        let name = body[..<semicolon]
        let isValid: Bool
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            isValid = name.count > 2 && name.dropFirst(2).allSatisfy(\.isHexDigit)
        } else if name.hasPrefix("#") {
            isValid = name.count > 1 && name.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
        } else {
            isValid = !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
        return isValid ? name.count + 2 : nil
    }
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var result = self
        while let last = result.last, predicate(last) { result = result.dropLast() }
        return result
    }
}
