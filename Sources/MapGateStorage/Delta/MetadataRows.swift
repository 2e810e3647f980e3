import FoundationEssentials
import MapGateBase

/// The entries of an MBTiles file's `metadata` table as a reader can meet them: each name's
/// values, NULL and a name given twice with other values included (values read as text: a
/// reader sees `5` and `'5'` alike; a row given twice with the same value is one), without
/// martin's hash keys (`agg_tiles_hash…`, which a delta's apply writes itself). What a delta must
/// carry from base to target, and what ``MBTilesDelta``'s format cannot: a NULL value (its
/// "remove") or a name with two values (its rows are one per name).
public struct MetadataRows: Equatable, Sendable {
    /// Each name's values, sorted with NULL (nil) first; the NULL name's under `nil`.
    public let values: [String?: [String?]]

    public init(ofFileAt path: String) throws {
        let database = try SQLiteDatabase(path: path, mode: .immutable)
        let rows = try database.query(
            "SELECT DISTINCT name, CAST(value AS TEXT) FROM metadata WHERE name IS NULL OR substr(name, 1, 14) != '\(MBTilesDelta.hashKey)'"
        ) { ($0.text(0), $0.text(1)) }
        values = Dictionary(grouping: rows, by: \.0).mapValues { $0.map(\.1).sorted(by: Self.nilFirst) }
    }

    private static func nilFirst(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, _): b != nil
        case (_, nil): false
        case let (a?, b?): a < b
        }
    }

    /// The first name (in order) whose values here are not `expected`'s, with both lists of values.
    public func firstDifference(from expected: MetadataRows) -> (name: String?, expected: [String?], actual: [String?])? {
        for name in Set(values.keys).union(expected.values.keys).sorted(by: Self.nilFirst) where values[name] != expected.values[name] {
            return (name, expected.values[name] ?? [], values[name] ?? [])
        }
        return nil
    }
}
