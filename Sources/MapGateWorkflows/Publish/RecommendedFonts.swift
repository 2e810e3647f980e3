import FoundationEssentials
import MapGateBase

/// The fonts a user's machine has when it installed what the mapgate package recommends
/// (`fonts-dejavu-core | fonts-noto-core`): what `publish` checks a style's `text-font` against,
/// so that a publisher learns before users do that their labels will be drawn in a fallback.
enum RecommendedFonts {
    static let packages = "fonts-dejavu-core or fonts-noto-core"

    /// The fonts' names as MapLibre styles name them (family and style, as `/fonts.json` lists them).
    static let names: Set<String> = [
        "DejaVu Sans Book", "DejaVu Sans Bold", "DejaVu Sans Mono Book", "DejaVu Sans Mono Bold", "DejaVu Serif Book", "DejaVu Serif Bold",
        "Noto Sans Regular", "Noto Sans Bold", "Noto Sans Italic", "Noto Sans Bold Italic", "Noto Serif Regular", "Noto Serif Bold",
        "Noto Sans Arabic Regular", "Noto Sans Arabic Bold", "Noto Naskh Arabic Regular", "Noto Sans Hebrew Regular",
        "Noto Sans Devanagari Regular", "Noto Sans Thai Regular",
    ]

    /// MapLibre's `text-font` when a style gives none.
    static let defaultStack = ["Open Sans Regular", "Arial Unicode MS Regular"]

    /// The `text-font` stacks of `style` (a style.json's text) none of whose fonts is one of
    /// ``names``: each such stack's labels are drawn in a fallback font on users' machines.
    /// Stacks given by an expression are not looked into.
    static func missingStacks(in style: String) -> [[String]] {
        guard let root = try? JSONValue(parsing: Data(style.utf8)), let layers = root["layers"]?.arrayValue else { return [] }
        var seen = Set<[String]>()
        var missing: [[String]] = []
        for layer in layers where layer["type"]?.stringValue == "symbol" {
            // A label with no `text-font` uses MapLibre's default stack.
            guard layer["layout"]?["text-field"] != nil else { continue }
            let stack = layer["layout"]?["text-font"]?.arrayValue ?? defaultStack.map { .string($0) }
            let fonts = stack.compactMap(\.stringValue)
            guard fonts.count == stack.count, !fonts.isEmpty, seen.insert(fonts).inserted else { continue }
            if !fonts.contains(where: names.contains) { missing.append(fonts) }
        }
        return missing
    }
}
