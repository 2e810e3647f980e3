import FoundationEssentials
import MapGate

/// `mapgate tile REGION Z X Y [-o FILE]`: one tile, exactly as stored.
struct TileCommand: Command {
    static let name = "tile"
    static let abstract = "Write one tile (XYZ coordinates) to stdout or a file"
    static let arguments = "REGION Z X Y"
    static let discussion = "Writes the tile's bytes exactly as stored (pbf tiles stay gzip-compressed). A use of the update gate, counted only once the tile is written."
    static let options = [OptionSpec(name: "output", short: "o", value: "FILE", help: "write the tile to FILE (- for stdout, even a terminal); a device or FIFO is written through, a regular file replaced atomically")]

    let region: String
    let coordinate: TileCoordinate
    let output: String?

    init(parsing arguments: ParsedArguments) throws {
        let values = arguments.positional
        guard values.count == 4 else { throw UsageError(message: "expected REGION Z X Y", usage: Self.usage) }
        guard let coordinate = TileCoordinate(z: values[1], x: values[2], y: values[3]) else {
            throw UsageError(message: "tile coordinates \(values[1])/\(values[2])/\(values[3]) are not valid XYZ coordinates", usage: Self.usage)
        }
        region = values[0]
        self.coordinate = coordinate
        output = arguments.value("output")
    }

    func run(_ context: Context) throws -> Int32 {
        // Everything that can be checked is checked before the gate counts a use.
        let destination = try OutputDestination.resolve(output)
        let library = try context.readOnlyRegionLibrary()
        let installed = try library.region(region)
        if let minzoom = installed.minzoom, let maxzoom = installed.maxzoom, !(minzoom...maxzoom).contains(coordinate.z) {
            throw RegionError(region: region, reason: "has no tiles at zoom \(coordinate.z) (its zoom range is \(minzoom)-\(maxzoom))", kind: .failure)
        }
        // The use is counted only once the tile's bytes are all written where the user asked.
        // A FIFO waits for its reader: Ctrl-C meanwhile gives the use back.
        _ = try GateGuard.withUse(context, opening: [region], interruptible: true) { authorization in
            let file = try library.open(region, authorization: authorization)
            switch try file.storedTile(z: coordinate.z, x: coordinate.x, y: coordinate.y) {
            case .absent:
                throw RegionError(region: region, reason: "no tile at \(coordinate)", kind: .failure)
            case .null:
                throw RegionError(region: region, reason: "tile \(coordinate) has no data (its tile_data is NULL)", kind: .badData)
            case .data(let tile):
                // Delivered once the first byte can be read: a reader that takes most of a large tile
                // and then breaks the write off (or stops mapgate) has had it.
                try destination.write(
                    tile, waiting: { context.console.note("waiting for a process to read \($0)… (Ctrl-C to stop)") },
                    reached: { authorization.recordDelivery() })
            }
        }
        return ExitCode.success
    }
}
