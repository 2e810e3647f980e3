import FoundationEssentials
import MapGateBase

/// What `sync` checks in an MBTiles file before it installs it, and `publish` before it offers
/// it: SQLite opens it, `PRAGMA quick_check` is ok, `tiles` and `metadata` exist (tables or
/// views), the tile format is known and the first tiles' bytes are of it, the zoom range obeys
/// ``zoomRange(tiles:metadata:)``, and there are tiles.
public struct MBTilesInspection: Sendable, Equatable {
    public var format: TileFormat
    /// The region's zoom range by the one rule, ``zoomRange(tiles:metadata:)``: what `publish`
    /// puts in the catalog, `sync` checks against it, `list` records and TileJSON says.
    public var zoom: ClosedRange<Int>
    /// The zoom range of the tiles themselves.
    public var tileZoom: ClosedRange<Int>
    /// `[west, south, east, north]` from metadata when present and made of four numbers.
    public var bounds: [Double]?
    /// The raw `bounds` metadata value, when there is one.
    public var boundsText: String?
    public var metadata: [String: String]

    /// A zoom range that breaks the rule, with the reason.
    public struct ZoomError: Error, Sendable {
        public var reason: String
    }

    /// The zooms a region may have: 0–30 (what XYZ URLs and the server accept).
    public static let validZooms = TileCoordinate.zooms

    /// The one zoom rule: the tiles' own range, which must lie in 0–30 (a tile at zoom −1 can
    /// never be asked for), widened to the metadata's `minzoom`/`maxzoom` when those are integers
    /// and say more (a reader may overzoom; older clients check the declared range). An integer
    /// `minzoom`/`maxzoom` outside 0–30, or a `minzoom` above `maxzoom`, is refused; a value that is
    /// no integer is ignored.
    public static func zoomRange(tiles: ClosedRange<Int>, metadata: [String: String]) throws(ZoomError) -> ClosedRange<Int> {
        guard validZooms.contains(tiles.lowerBound), validZooms.contains(tiles.upperBound) else {
            throw ZoomError(reason: L.localized("it has tiles at zoom %1$s–%2$s, outside 0–30", "\(tiles.lowerBound)", "\(tiles.upperBound)"))
        }
        func declared(_ key: String) -> Int? { metadata[key].flatMap { Int($0.trimmingWhitespace()) } }
        let low = declared("minzoom")
        let high = declared("maxzoom")
        for (key, value) in [("minzoom", low), ("maxzoom", high)] {
            if let value, !validZooms.contains(value) { throw ZoomError(reason: L.localized("metadata %1$s %2$s is outside 0–30", "\(key)", "\(value)")) }
        }
        if let low, let high, low > high { throw ZoomError(reason: L.localized("metadata minzoom %1$s is above maxzoom %2$s", "\(low)", "\(high)")) }
        return min(tiles.lowerBound, low ?? tiles.lowerBound)...max(tiles.upperBound, high ?? tiles.upperBound)
    }

    /// Inspects the file at `path`; throws ``MBTilesError`` naming the file and the reason.
    /// `immutable`: nobody writes the file meanwhile, and reading it leaves no `-wal`/`-shm`
    /// beside it (a publisher's input in WAL mode). `checkingIntegrity`: SQLite's `quick_check`
    /// over every page first (false only for a file whose pages were checked before and whose
    /// changes SQLite itself wrote: a delta's result checked by its LtHash).
    public static func inspect(_ path: String, immutable: Bool = false, checkingIntegrity: Bool = true) throws -> MBTilesInspection {
        let file = try MBTilesFile(path: path, immutable: immutable)
        if checkingIntegrity { try file.checkIntegrity() }
        guard let (format, source) = try file.formatAndSource() else {
            // Tiles none of which has a byte: said as such, not as an unknown format (found by an attack).
            if try file.tileZoomRange() != nil, try !file.hasTileBytes() {
                throw MBTilesError(path: path, reason: L.localized("every tile is empty (0 bytes or NULL): there is nothing to show"))
            }
            throw MBTilesError(path: path, reason: L.localized("the tile format is unknown (no format metadata, no recognisable tile)"))
        }
        try file.checkTileBytes(match: format, from: source)
        guard let tileZoom = try file.tileZoomRange(), let zoom = try file.zoomRange(), try file.canReadATile() else {
            throw MBTilesError(path: path, reason: L.localized("it holds no tiles"))
        }
        let metadata = try file.metadata()
        // A region whose bounds or center are not numbers on the globe breaks TileJSON and the
        // viewer: refused here, at install.
        if let text = metadata["bounds"], MBTilesFile.parseBounds(text) == nil {
            throw MBTilesError(path: path, reason: L.localized("bounds \"%1$s\" are not finite west,south,east,north on the globe", "\(text.prefix(80))"))
        }
        // MBTiles rows are TMS; some tools write XYZ rows and say so in `scheme`, and some write
        // `scheme` xyz over TMS rows. The bounds tell which: the advice follows them (issue 38).
        let agreement = try file.bounds().map { TileBoundsAgreement(addresses: try file.sampledTileAddresses(), bounds: $0) }
        // Through negative rows, in two steps: in one, a row moved onto another not yet moved
        // breaks a unique index (found by an attack: the advice failed on real files); and on
        // `map` where `tiles` is a view, which cannot be updated.
        let table = try file.rowTable()
        let flip = "UPDATE \(table) SET tile_row = -1 - tile_row; UPDATE \(table) SET tile_row = (1 << zoom_level) + tile_row"
        if let scheme = metadata["scheme"]?.trimmingWhitespace(), scheme.lowercased() != "tms" {
            let shown = String(scheme.prefix(40))
            let reason: String
            if let agreement, agreement.tmsAgrees, !agreement.xyzAgrees {
                reason = L.localized("metadata scheme is \"%1$s\", but the rows are TMS and agree with the bounds: the scheme row is wrong; delete it (DELETE FROM metadata WHERE name = 'scheme') and change nothing else", shown)
            } else if let agreement, agreement.xyzAgrees, !agreement.tmsAgrees {
                reason = L.localized("metadata scheme is \"%1$s\" and the rows are XYZ (they agree with the bounds read so): MBTiles rows are TMS; flip them (%2$s) and delete the scheme row", shown, flip)
            } else {
                reason = L.localized("metadata scheme is \"%1$s\": MBTiles rows are TMS (row = 2^z - 1 - y), which mapgate reads, and the bounds do not tell which the rows are; if they are XYZ, flip them (%2$s); then delete the scheme row", shown, flip)
            }
            throw MBTilesError(path: path, reason: reason)
        }
        if let agreement, !agreement.anyTMSInside, let bounds = try file.bounds() {
            let hint = agreement.xyzAgrees ? L.localized("the rows are XYZ: flip them (%1$s)", flip) : L.localized("the bounds or the rows are wrong")
            throw MBTilesError(
                path: path,
                reason: L.localized("none of its tiles lies inside its bounds %1$s: %2$s", bounds.map { String($0) }.joined(separator: ","), hint))
        }
        if let text = metadata["center"], MBTilesFile.parseCenter(text) == nil {
            // Each range said: "not finite" read wrong for a zoom of 99 (found by an attack).
            throw MBTilesError(
                path: path,
                reason: L.localized(
                    "center \"%1$s\" must be longitude,latitude,zoom with longitude -180…180, latitude -90…90 and zoom 0…%2$s", "\(text.prefix(80))",
                    "\(TileCoordinate.maximumZoom)"))
        }
        return MBTilesInspection(
            format: format, zoom: zoom, tileZoom: tileZoom, bounds: try file.bounds(), boundsText: metadata["bounds"], metadata: metadata)
    }
}
