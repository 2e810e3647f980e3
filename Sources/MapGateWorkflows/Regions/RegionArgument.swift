import FoundationEssentials
import MapGateBase
import MapGateTrust

/// A region as the user typed it on the command line: its id (`tokyo`), its id however typed (the
/// full-width letters a Chinese, Japanese or Korean input method gives, `ｔｏｋｙｏ`, or capitals,
/// `Tokyo`), or its name as the catalog gives it (`東京`, `Berlin`; `ｶﾞｲﾄﾞ` for `ガイド`).
///
/// An id typed as it is always names that region, as it did before names were taken (`plain_1`,
/// an id's form, is the name of the region `plain` when no region has that id). Otherwise
/// the words name the one region whose id they fold to or whose name they are; when those are two
/// regions (a region named "Tokyo" beside the region `tokyo`), or the name is that of several, the
/// run names them and does nothing (found by an attack: `remove Tokyo` removed `tokyo`, not the
/// region `list` shows as "Tokyo").
public struct RegionArgument: Sendable, Equatable {
    /// The words as typed.
    public let typed: String

    public init(_ typed: String) {
        self.typed = typed
    }

    /// The id the words are, typed as an id is written: it names that region whatever the names.
    public var exactID: String? { Catalog.isValidRegionID(typed) ? typed : nil }

    /// The id the words fold to (full-width ASCII as ASCII, capitals as small letters), if any.
    public var foldedID: String? {
        let folded = Self.folded(typed)
        return Catalog.isValidRegionID(folded) ? folded : nil
    }

    /// The longest words taken as a name (the command line holds far longer; no catalog's name
    /// needs more).
    static let maximumNameBytes = 1024

    /// Why the words can name no region, or nil: a usage error (exit 64) before anything is done.
    /// A path, control characters, a space at either end and a route's name are refused, each
    /// said as itself.
    public static func problem(_ typed: String) -> String? {
        let argument = RegionArgument(typed)
        if argument.exactID != nil { return nil }
        if let folded = argument.foldedID {
            return Catalog.reservedRegionIDs.contains(folded) ? Catalog.regionIDProblem(folded) : nil
        }
        let folded = folded(typed)
        if Catalog.reservedRegionIDs.contains(folded) { return Catalog.regionIDProblem(folded) }
        if typed.isEmpty || typed.contains("/") || typed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) {
            return Catalog.regionIDProblem(typed)
        }
        if typed.first?.isWhitespace == true || typed.last?.isWhitespace == true {
            return L.localized("\"%1$s\" has a space at its start or end: no region's id or name does", TerminalText.inline(typed))
        }
        if typed.utf8.count > maximumNameBytes {
            return L.localized("%1$s bytes: longer than any region's id or name", "\(typed.utf8.count)")
        }
        return nil
    }

    /// The id these words name among `regions` (the installed ones, or a catalog's); nil when
    /// they name none.
    /// - Throws: a ``RegionError`` (usage, 64) when they name several, saying which.
    public func id(among regions: [(id: String, name: String)]) throws -> String? {
        if let exactID, regions.contains(where: { $0.id == exactID }) { return exactID }
        // A name as typed, else as folded (full-width letters and digits, capitals): `東京２３区`
        // is `東京23区`, `new york` is `New York`.
        var named = regions.filter { $0.name == typed }.map(\.id)
        if named.isEmpty {
            let folded = Self.folded(typed)
            named = regions.filter { Self.folded($0.name) == folded }.map(\.id)
        }
        if let foldedID, regions.contains(where: { $0.id == foldedID }), !named.contains(foldedID) { named.append(foldedID) }
        let ids = Set(named).sorted()
        guard ids.count <= 1 else {
            throw RegionError(
                region: typed, reason: L.localized("%1$s regions have this name (%2$s): give the id of the one you mean", "\(ids.count)", ids.joined(separator: L.localized(", "))),
                kind: .usage)
        }
        return ids.first ?? exactID ?? foldedID
    }

    /// Full-width ASCII and the ideographic space as ASCII, half-width katakana as full-width
    /// (``FullWidth``), and ASCII capitals as small letters: what an input method's width or the
    /// shift key changes.
    static func folded(_ typed: String) -> String {
        String(String.UnicodeScalarView(FullWidth.katakana(FullWidth.ascii(typed)).unicodeScalars.map { (0x41...0x5A).contains($0.value) ? Unicode.Scalar($0.value + 0x20)! : $0 }))
    }
}
