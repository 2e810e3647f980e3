import FoundationEssentials

/// The fields of one catalog entry (a region, a delta, a style), read the same strict way: each
/// getter throws the entry's ``CatalogError`` naming the field and what is wrong with it.
struct CatalogFields {
    let fields: [String: JSONValue]
    let fail: (String) -> CatalogError

    subscript(key: String) -> JSONValue? { fields[key] }

    /// A non-empty string.
    func string(_ key: String) throws -> String {
        guard let value = fields[key]?.stringValue, !value.isEmpty else { throw fail("\(key) is missing or not a string") }
        return value
    }

    /// An integer 1…`limit` (a boolean is not a number).
    func size(_ key: String, limit: Int64 = Catalog.maximumSize) throws -> Int64 {
        guard let raw = fields[key], raw.isNumber, !raw.isBoolean, let value = raw.double.flatMap({ Int64(exactly: $0) }) else {
            throw fail("\(key) is missing or not an integer")
        }
        guard value > 0, value <= limit else { throw fail("\(key) \(value) is out of range (1…\(limit))") }
        return value
    }

    /// `sha256`: 64 hex digits, lower-cased. ASCII only: Character.isHexDigit also accepts
    /// fullwidth digits, which no digest matches.
    func sha256() throws -> String {
        let hash = try string("sha256").lowercased()
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw fail("sha256 \"\(hash)\" is not 64 hex digits")
        }
        return hash
    }

    /// `url`, resolved against the catalog's URL (``Catalog/resolve(_:against:fail:)``).
    func url(against sourceURL: String) throws -> String {
        try Catalog.resolve(try string("url"), against: sourceURL, fail: fail)
    }
}
