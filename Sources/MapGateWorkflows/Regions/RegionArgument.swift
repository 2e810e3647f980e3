import FoundationEssentials
import MapGateBase
import MapGateTrust

/// A region as the user typed it on the command line: its id however typed (the full-width
/// letters a Chinese, Japanese or Korean input method gives, `ｇｅｏ`, or capitals, `Geo`), or its
/// name as the catalog gives it (`東京`). Ids are lower-case ASCII, so neither folding can name
/// another region; a name names the one region that has it, or the run says which it could be.
public struct RegionArgument: Sendable, Equatable {
    /// The words as typed.
    public let typed: String
    /// The region id they read as, when they read as one.
    public let id: String?

    public init(_ typed: String) {
        self.typed = typed
        let folded = Self.folded(typed)
        id = Catalog.isValidRegionID(folded) ? folded : nil
    }

    /// Why the words can name no region, or nil: a usage error (exit 64) before anything is done.
    /// A path or control characters are refused as they always were; a route's name too.
    public static func problem(_ typed: String) -> String? {
        let argument = RegionArgument(typed)
        if argument.id != nil { return nil }
        let folded = folded(typed)
        let isName = !typed.isEmpty && typed.utf8.count <= 256 && !typed.contains("/")
            && !typed.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }
            && !Catalog.reservedRegionIDs.contains(folded) && typed.first?.isWhitespace == false && typed.last?.isWhitespace == false
        return isName ? nil : Catalog.regionIDProblem(typed)
    }

    /// The id these words name among `regions` (the installed ones, or a catalog's): the id they
    /// read as, else the one region whose name they are; nil when they name none.
    /// - Throws: a ``RegionError`` (usage) when the name is that of several regions, naming them.
    public func id(among regions: [(id: String, name: String)]) throws -> String? {
        if let id { return id }
        let named = regions.filter { $0.name == typed }.map(\.id).sorted()
        guard named.count <= 1 else {
            throw RegionError(
                region: typed, reason: L.localized("%1$s regions have this name (%2$s): give the id of the one you mean", "\(named.count)", named.joined(separator: L.localized(", "))),
                kind: .usage)
        }
        return named.first
    }

    /// Full-width ASCII (U+FF01–U+FF5E, a fixed offset from U+0021–U+007E) as ASCII, and ASCII
    /// capitals as small letters: only what an id can be typed as.
    static func folded(_ typed: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in typed.unicodeScalars {
            var value = scalar.value
            if (0xFF01...0xFF5E).contains(value) { value -= 0xFEE0 }
            if (0x41...0x5A).contains(value) { value += 0x20 }
            scalars.append(Unicode.Scalar(value) ?? scalar)
        }
        return String(scalars)
    }
}
