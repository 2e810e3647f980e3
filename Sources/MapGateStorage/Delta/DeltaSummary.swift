/// What a tile delta holds: the hashes it goes from and to, and how many tiles and metadata
/// entries it writes or removes.
public struct DeltaSummary: Sendable, Equatable {
    /// `agg_tiles_hash_before_apply`: the hash of the tileset the delta applies to.
    public let baseHash: String
    /// `agg_tiles_hash_after_apply`: the hash of the tileset it gives.
    public let targetHash: String
    /// Tiles added or changed.
    public let tilesWritten: Int
    /// Tiles removed (rows with NULL `tile_data`).
    public let tilesRemoved: Int
    /// Metadata entries added or changed (the three hash keys not counted).
    public let metadataWritten: Int
    /// Metadata entries removed (rows with NULL `value`).
    public let metadataRemoved: Int
    /// Whether ``MBTilesDelta/apply(delta:to:hashes:baseHash:flushesOnCommit:)`` checked the
    /// result's tiles itself (by the ``TilesLtHash`` of the delta's change), so that the caller need not hash them.
    public var resultChecked = false
    /// When the result was checked so, in a file whose `tiles` is a table: how many tiles it
    /// holds more (or, below zero, fewer) than before, counted at the places the delta changed.
    /// The caller adds it to the count it recorded for the base instead of passing over the
    /// result. Nil through a `tiles` view, where rows elsewhere can change with the delta's.
    public var tileCountChange: Int? = nil

    public init(
        baseHash: String, targetHash: String, tilesWritten: Int, tilesRemoved: Int, metadataWritten: Int,
        metadataRemoved: Int
    ) {
        self.baseHash = baseHash
        self.targetHash = targetHash
        self.tilesWritten = tilesWritten
        self.tilesRemoved = tilesRemoved
        self.metadataWritten = metadataWritten
        self.metadataRemoved = metadataRemoved
    }

    /// Whether the delta changes nothing.
    public var isEmpty: Bool {
        tilesWritten == 0 && tilesRemoved == 0 && metadataWritten == 0 && metadataRemoved == 0
    }
}
