import Foundation
import MapGate

/// `mapgate tile REGION Z X Y [-o FILE]`: one tile, exactly as stored.
struct TileCommand: Command {
    static let name = "tile"
    static let abstract = "Write one tile (XYZ coordinates) to stdout or a file"
    static let arguments = "REGION Z X Y"
    static let discussion = "Writes the tile's bytes exactly as stored (pbf tiles stay gzip-compressed). A use of the update gate."
    static let options = [OptionSpec(name: "output", short: "o", value: "FILE", help: "write the tile to FILE (- for stdout, even a terminal); a device or FIFO is written through, a regular file replaced atomically")]

    let region: String
    let z: Int
    let x: Int
    let y: Int
    let output: String?

    init(parsing arguments: ParsedArguments) throws {
        let values = arguments.positional
        guard values.count == 4 else { throw UsageError(message: "expected REGION Z X Y", usage: Self.usage) }
        guard let z = Int(values[1]), let x = Int(values[2]), let y = Int(values[3]), (0...30).contains(z), x >= 0, y >= 0,
            x < 1 << z, y < 1 << z
        else {
            throw UsageError(message: "tile coordinates \(values[1])/\(values[2])/\(values[3]) are not valid XYZ coordinates", usage: Self.usage)
        }
        region = values[0]
        self.z = z
        self.x = x
        self.y = y
        output = arguments.value("output")
    }

    func run(_ context: Context) throws -> Int32 {
        // Everything that can be checked is checked before the gate counts a use.
        let destination = try OutputDestination.resolve(output)
        let library = try context.readOnlyRegionLibrary()
        let installed = try library.region(region)
        if let minzoom = installed.minzoom, let maxzoom = installed.maxzoom, !(minzoom...maxzoom).contains(z) {
            throw RegionError(region: region, reason: "has no tiles at zoom \(z) (its zoom range is \(minzoom)-\(maxzoom))", kind: .failure)
        }
        guard let authorization = try GateGuard.authorize(context, opening: [region]) else { return ExitCode.success }
        let file = try library.open(region, authorization: authorization)
        switch try file.storedTile(z: z, x: x, y: y) {
        case .absent:
            throw RegionError(region: region, reason: "no tile at \(z)/\(x)/\(y)", kind: .failure)
        case .null:
            throw RegionError(region: region, reason: "tile \(z)/\(x)/\(y) has no data (its tile_data is NULL)", kind: .badData)
        case .data(let tile):
            try destination.write(tile)
        }
        return ExitCode.success
    }
}
