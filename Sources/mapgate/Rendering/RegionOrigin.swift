import MapGate

private typealias L = Localization

/// Where an installed region came from, as `list` shows it: the publisher's URL as it is, a
/// mirror's with the word "mirror" in the user's language (the record keeps it in English).
enum RegionOrigin {
    static func label(_ origin: String?) -> String {
        guard let origin else { return "-" }
        if origin.hasPrefix("mirror ") { return L.localized("mirror %1$s", TerminalText.inline(String(origin.dropFirst("mirror ".count)))) }
        return TerminalText.inline(origin)
    }
}
