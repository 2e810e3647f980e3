import FoundationEssentials
import MapGateBase

/// A set of tiles with its metadata, whatever holds it: an MBTiles file (``MBTilesFile``, the
/// installed cache's format) or a PMTiles v3 archive (``PMTilesArchive``). martin's `Source`,
/// go-pmtiles' `Bucket`: open, metadata, one tile, every tile. The content hash
/// (``TileStore/contentHash()``) is computed from what the protocol gives.
///
/// Not `Sendable`: a store owns a connection or a file descriptor confined to one thread.
public protocol TileStore: AnyObject {
    /// The file, as errors name it.
    var path: String { get }

    /// The metadata as MBTiles' `metadata` table has it (name → text; `json` holds
    /// `vector_layers`), without values over ``MBTilesFile/metadataLimit(for:)``.
    func metadata() throws -> [String: String]

    /// The tile at XYZ coordinates `z/x/y` exactly as stored, or nil when there is none.
    func tile(z: Int, x: Int, y: Int) throws -> Data?

    /// Every tile as (z, x, y in XYZ, bytes), in increasing (zoom, column, TMS row) order: the
    /// order of martin's `agg_tiles_hash`, and the order an MBTiles file is written in.
    func forEachTile(_ body: (Int, Int, Int, Data) throws -> Void) throws
}

extension MBTilesFile: TileStore {}

/// The kinds of tile store, told by the file's name.
public enum TileStoreKind: String, Sendable, CaseIterable {
    case mbtiles, pmtiles

    /// The kind a file name says (`.mbtiles`, `.pmtiles`, any case); nil for another name.
    public init?(fileName: String) {
        let lowered = fileName.lowercased()
        if lowered.hasSuffix(".mbtiles") {
            self = .mbtiles
        } else if lowered.hasSuffix(".pmtiles") {
            self = .pmtiles
        } else {
            return nil
        }
    }

    /// Opens the file at `path` as a store of this kind.
    public func open(_ path: String) throws -> any TileStore {
        switch self {
        case .mbtiles: try MBTilesFile(path: path, immutable: true)
        case .pmtiles: try PMTilesArchive(path: path)
        }
    }
}
