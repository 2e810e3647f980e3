import FoundationEssentials
import MapGateBase

/// The language of the pages a browser reads (the region list, the viewers): the first of the
/// browser's `Accept-Language` (by q-value) that mapgate has a catalog for, else English.
/// `<html lang>` is its ``tag``. The catalogs are those the command line uses
/// (``Localization/catalogFolder``), read by the server itself (``MessageCatalog``), so each
/// browser gets its own language whatever the server's locale is.
public struct PageLanguage: Sendable {
    /// The BCP 47 tag for `<html lang>`: `en`, `zh-CN`, `zh-TW`, `ja`, `ko`.
    public let tag: String
    let catalog: MessageCatalog?

    public static let english = PageLanguage(tag: "en", catalog: nil)

    /// The message in this language with its placeholders filled (`%1$s`, …); marked for
    /// translation like the command line's (`localized("…")`).
    public func localized(_ message: String, _ arguments: String...) -> String {
        Localization.format(catalog?.messages[message] ?? message, arguments)
    }

    /// A message with a count: the catalog's form (the languages mapgate has a catalog for have
    /// one form for every count), else English's singular or plural. `%d` is left for the caller.
    public func localized(singular: String, plural: String, count: Int) -> String {
        catalog?.messages[singular] ?? (count == 1 ? singular : plural)
    }

    /// The catalogs mapgate has, by the name of their folder (`zh_CN`, `zh_TW`, `ja`, `ko`),
    /// read once.
    static let installed: [String: MessageCatalog] = {
        guard let folder = Localization.catalogFolder else { return [:] }
        var catalogs: [String: MessageCatalog] = [:]
        for name in catalogNames.values {
            if let catalog = MessageCatalog(path: "\(folder)/\(name)/LC_MESSAGES/\(Localization.domain).mo") { catalogs[name] = catalog }
        }
        return catalogs
    }()

    /// The HTML tag of each catalog.
    static let catalogNames = ["zh-CN": "zh_CN", "zh-TW": "zh_TW", "ja": "ja", "ko": "ko"]

    /// The language for an `Accept-Language` header (RFC 9110 §12.5.4), among `catalogs`.
    public static func negotiate(_ header: String?, catalogs: [String: MessageCatalog]? = nil) -> PageLanguage {
        let catalogs = catalogs ?? installed
        guard let header else { return .english }
        var ranges: [(tag: String, quality: Double, order: Int)] = []
        for (order, item) in header.lowercased().split(separator: ",").enumerated() {
            let parts = item.split(separator: ";").map { $0.trimmingWhitespace() }
            guard let range = parts.first, !range.isEmpty else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") { quality = Double(parameter.dropFirst(2)) ?? 0 }
            if quality > 0 { ranges.append((String(range), quality, order)) }
        }
        for range in ranges.sorted(by: { $0.quality != $1.quality ? $0.quality > $1.quality : $0.order < $1.order }) {
            if range.tag == "en" || range.tag.hasPrefix("en-") { return .english }
            guard let tag = htmlTag(forRange: range.tag), let name = catalogNames[tag], let catalog = catalogs[name] else { continue }
            return PageLanguage(tag: tag, catalog: catalog)
        }
        return .english
    }

    /// `zh-TW`, `zh-HK`, `zh-MO` and `zh-Hant…` read traditional characters; other Chinese
    /// simplified.
    private static func htmlTag(forRange range: String) -> String? {
        let subtags = range.split(separator: "-").map(String.init)
        switch subtags.first {
        case "ja": return "ja"
        case "ko": return "ko"
        case "zh":
            let rest = Set(subtags.dropFirst())
            return rest.contains("hant") || !rest.isDisjoint(with: ["tw", "hk", "mo"]) ? "zh-TW" : "zh-CN"
        default: return nil
        }
    }
}
