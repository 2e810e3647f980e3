import Foundation

/// The test databases of martin's `mbtiles` crate and the diff its `mbtiles diff` makes of them,
/// as its snapshot files record them (maplibre/martin, `mbtiles/tests/snapshots/`
/// `copy__databases@flat__v1.snap`, `…@flat__v2.snap`, `…@flat__dif.snap`, `…@flat__dif_empty.snap`,
/// made by `mbtiles/tests/copy.rs`). `blob(text)` there is a blob of the text's bytes.
enum MartinSnapshots {
    private static func blob(_ text: String) -> Data? { Data(text.utf8) }

    static let v1Hash = "9ED9178D7025276336C783C2B54D6258"
    static let v2Hash = "3BCDEE3F52407FF1315629298CB99133"
    static let difHash = "B86122579EDCDD4C51F3910894FCC1A1"

    static let v1Tiles: [TileKey: Data?] = [
        TileKey(3, 6, 7): blob("root"), TileKey(5, 0, 0): blob("same"), TileKey(5, 0, 1): blob(""),
        TileKey(5, 1, 1): blob("edit-v1"), TileKey(5, 1, 2): blob(""), TileKey(5, 1, 3): blob("non-empty"),
        TileKey(5, 2, 2): blob("remove"), TileKey(5, 2, 3): blob(""), TileKey(6, 0, 3): blob("same"),
        TileKey(6, 0, 5): blob("1-keep-1-rm"), TileKey(6, 1, 4): blob("edit-v1"), TileKey(6, 2, 6): blob("1-keep-1-rm"),
    ]
    static let v1Metadata: [String: String?] = [
        "agg_tiles_hash": v1Hash, "md-edit": "value - v1", "md-remove": "value - remove", "md-same": "value - same",
    ]

    static let v2Tiles: [TileKey: Data?] = [
        TileKey(3, 6, 7): blob("root"), TileKey(5, 0, 0): blob("same"), TileKey(5, 0, 1): blob(""),
        TileKey(5, 1, 1): blob("edit-v2"), TileKey(5, 1, 2): blob("not-empty"), TileKey(5, 1, 3): blob(""),
        TileKey(5, 3, 7): blob("new"), TileKey(5, 3, 8): blob("new"), TileKey(6, 0, 3): blob("same"),
        TileKey(6, 0, 5): blob("1-keep-1-rm"), TileKey(6, 1, 4): blob("edit-v2a"),
    ]
    static let v2Metadata: [String: String?] = [
        "agg_tiles_hash": v2Hash, "md-edit": "value - v2", "md-new": "value - new", "md-same": "value - same",
    ]

    /// The v1 → v2 diff: changed and new tiles with v2's bytes (an empty blob is not NULL), removed
    /// tiles NULL; metadata that changed, is new, or is removed (NULL), and the three hash keys.
    static let difTiles: [TileKey: Data?] = [
        TileKey(5, 1, 1): blob("edit-v2"), TileKey(5, 1, 2): blob("not-empty"), TileKey(5, 1, 3): blob(""),
        TileKey(5, 2, 2): nil, TileKey(5, 2, 3): nil, TileKey(5, 3, 7): blob("new"), TileKey(5, 3, 8): blob("new"),
        TileKey(6, 1, 4): blob("edit-v2a"), TileKey(6, 2, 6): nil,
    ]
    static let difMetadata: [String: String?] = [
        "agg_tiles_hash": difHash, "agg_tiles_hash_after_apply": v2Hash, "agg_tiles_hash_before_apply": v1Hash,
        "md-edit": "value - v2", "md-new": "value - new", "md-remove": nil,
    ]
}
