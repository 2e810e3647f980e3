import FoundationEssentials

extension TileStore {
    /// martin's `agg_tiles_hash` of the store's tiles (``TilesetHash``), whatever holds them: an
    /// MBTiles file hashes in SQLite (``TilesetHash/compute(ofFileAt:timeLimit:immutable:)``),
    /// any other store through ``TileStore/forEachTile(_:)``, which hands tiles over in the
    /// hash's order. One archive and the MBTiles converted from it have the same hash.
    public func contentHash() throws -> TilesetHash {
        if self is MBTilesFile { return try TilesetHash.compute(ofFileAt: path, immutable: true) }
        let hasher = try TilesetHasher()
        try forEachTile { z, x, y, data in
            try hasher.add(zoom: z, column: x, row: TileCoordinate.flippedRow(y, zoom: z), data: data)
        }
        return try hasher.finalize()
    }
}
