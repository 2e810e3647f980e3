import Foundation

/// What `sync` checks in an MBTiles file before it installs it, and `publish` before it offers
/// it: SQLite opens it, `PRAGMA quick_check` is ok, `tiles` and `metadata` exist (tables or
/// views), the tile format is known, and there are tiles.
public struct MBTilesInspection: Sendable, Equatable {
    public var format: TileFormat
    /// The range a reader sees: the metadata's `minzoom`/`maxzoom`, else the tiles'.
    public var zoom: ClosedRange<Int>
    /// The zoom range of the tiles themselves.
    public var tileZoom: ClosedRange<Int>
    /// `[west, south, east, north]` from metadata when present and made of four numbers.
    public var bounds: [Double]?
    /// The raw `bounds` metadata value, when there is one.
    public var boundsText: String?
    public var metadata: [String: String]

    /// Inspects the file at `path`; throws ``MBTilesError`` naming the file and the reason.
    public static func inspect(_ path: String) throws -> MBTilesInspection {
        let file = try MBTilesFile(path: path)
        try file.checkIntegrity()
        guard let format = try file.format() else {
            throw MBTilesError(path: path, reason: "the tile format is unknown (no format metadata, no recognisable tile)")
        }
        guard let tileZoom = try file.tileZoomRange(), let zoom = try file.zoomRange(), try file.canReadATile() else {
            throw MBTilesError(path: path, reason: "it holds no tiles")
        }
        let metadata = try file.metadata()
        // A region whose bounds or center are not numbers on the globe breaks TileJSON and the
        // viewer: refused here, at install.
        if let text = metadata["bounds"], MBTilesFile.parseBounds(text) == nil {
            throw MBTilesError(path: path, reason: "bounds \"\(text.prefix(80))\" are not finite west,south,east,north on the globe")
        }
        if let text = metadata["center"], MBTilesFile.parseCenter(text) == nil {
            throw MBTilesError(path: path, reason: "center \"\(text.prefix(80))\" is not a finite longitude,latitude,zoom")
        }
        return MBTilesInspection(
            format: format, zoom: zoom, tileZoom: tileZoom, bounds: try file.bounds(), boundsText: metadata["bounds"], metadata: metadata)
    }
}
