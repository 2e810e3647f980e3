import FoundationEssentials
import MapGateBase

/// The checks every catalog entry's package fields get (a region, a delta, a style), each
/// throwing the entry's ``CatalogError`` naming the field and what is wrong with it.
struct CatalogFieldCheck {
    let fail: (String) -> CatalogError

    /// A string that is not empty.
    func nonEmpty(_ value: String, _ key: String) throws -> String {
        guard !value.isEmpty else { throw fail(L.localized("%1$s is empty", "\(key)")) }
        return value
    }

    /// A size of 1…`limit` bytes.
    func size(_ value: Int64, _ key: String, limit: Int64 = Catalog.maximumSize) throws -> Int64 {
        guard value > 0, value <= limit else { throw fail(L.localized("%1$s %2$s is out of range (1…%3$s)", "\(key)", "\(value)", "\(limit)")) }
        return value
    }

    /// `sha256`: 64 hex digits, lower-cased (``Swift/StringProtocol/isSHA256Hex``).
    func sha256(_ value: String) throws -> String {
        let hash = value.lowercased()
        guard hash.isSHA256Hex else {
            throw fail(L.localized("sha256 \"%1$s\" is not 64 hex digits", "\(hash)"))
        }
        return hash
    }

    /// A package URL, resolved against the catalog's URL (``Catalog/resolve(_:against:fail:)``).
    func url(_ value: String, against sourceURL: String) throws -> String {
        try Catalog.resolve(try nonEmpty(value, "url"), against: sourceURL, fail: fail)
    }
}
