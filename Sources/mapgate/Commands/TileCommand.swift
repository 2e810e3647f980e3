import FoundationEssentials
import MapGate

private typealias L = Localization

/// `mapgate tile REGION Z X Y [-o FILE]`: one tile, exactly as stored.
struct TileCommand: Command {
    static let name = "tile"
    static let abstract = L.localized("Write one tile (XYZ coordinates) to stdout or a file")
    static let arguments = "REGION Z X Y"
    static let discussion = L.localized("Writes the tile's bytes exactly as stored (pbf tiles stay gzip-compressed). A use of the update gate, counted only once the tile is written.")
    static let options = [OptionSpec(name: "output", short: "o", value: "FILE", help: L.localized("write the tile to FILE (- for stdout, even a terminal); a device or FIFO is written through, a regular file replaced atomically"))]

    let region: String
    let coordinate: TileCoordinate
    let output: String?

    init(parsing arguments: ParsedArguments) throws {
        // Coordinates typed with an input method's full-width digits (`１０ ９０９ ４０３`) are read
        // as the digits they are.
        let values = arguments.positional.enumerated().map { $0.offset == 0 ? $0.element : FullWidth.ascii($0.element) }
        guard values.count == 4 else { throw UsageError(message: L.localized("expected REGION Z X Y"), usage: Self.usage) }
        guard let coordinate = TileCoordinate(z: values[1], x: values[2], y: values[3]) else {
            // Which rule it breaks (found by a review: `tile r 1 5 5` did not say that X and Y
            // run to 1 at zoom 1).
            let rule = Int(values[1]).flatMap { TileCoordinate.zooms.contains($0) ? $0 : nil }.map { zoom in
                L.localized("at zoom %1$s, X and Y are whole numbers from 0 to %2$s", "\(zoom)", "\((1 << zoom) - 1)")
            } ?? L.localized("the zoom is a whole number from 0 to %1$s", "\(TileCoordinate.maximumZoom)")
            throw UsageError(
                message: L.localized(
                    "tile coordinates %1$s/%2$s/%3$s are not valid XYZ coordinates: %4$s", TerminalText.inline(values[1]), TerminalText.inline(values[2]),
                    TerminalText.inline(values[3]), rule),
                usage: Self.usage)
        }
        region = values[0]
        try UsageError.requireRegion(region, usage: Self.usage)
        self.coordinate = coordinate
        output = arguments.value("output")
    }

    func run(_ context: Context) throws -> Int32 {
        // Everything that can be checked is checked before the gate counts a use.
        let destination = try OutputDestination.resolve(output)
        try destination.refuse(inside: [context.dataDirectory.path, context.stateFolder])
        let library = try context.readOnlyRegionLibrary()
        let region = try library.regionID(typed: region)
        let installed = try library.requireIntact(region).record
        if let minzoom = installed.minzoom, let maxzoom = installed.maxzoom, !(minzoom...maxzoom).contains(coordinate.z) {
            throw RegionError(region: region, reason: L.localized("has no tiles at zoom %1$s (its zoom range is %2$s-%3$s)", "\(coordinate.z)", "\(minzoom)", "\(maxzoom)"), kind: .failure)
        }
        try destination.requireReader(within: context.outputStallLimit)
        let faults = FaultInjection(environment: context.environment)
        // The use is counted only once the tile's bytes are all written where the user asked.
        // A FIFO waits for its reader: Ctrl-C meanwhile gives the use back.
        let ran: Void? = try GateGuard.withUse(context, opening: [region]) { authorization in
            let file = try library.open(region, authorization: authorization)
            switch try file.storedTile(z: coordinate.z, x: coordinate.x, y: coordinate.y) {
            case .absent:
                throw RegionError(region: region, reason: L.localized("no tile at %1$s", "\(coordinate)"), kind: .failure)
            case .null:
                throw RegionError(region: region, reason: L.localized("tile %1$s has no data (its tile_data is NULL)", "\(coordinate)"), kind: .badData)
            case .data(let tile):
                // Delivered once the first byte can be read, or once a file is linked into place
                // (OutputDestination.write): a reader that takes most of a large tile and then
                // breaks the write off has had it. A signal after the delivery lets the tile be
                // written to its end (SignalRouter.finishingOutput).
                try GateGuard.sayingWhenCounted(authorization) { try SignalRouter.finishingOutput(console: context.console) { delivered in
                    try destination.write(
                        tile, waiting: { context.console.note(OutputDestination.waitingNote($0)) }, stallLimit: context.outputStallLimit,
                        willDeliver: { faults.reached("delivering") },
                        deliver: { step in
                            try authorization.deliver {
                                try step()
                                delivered()
                            }
                            faults.reached("delivered")
                        })
                } }
            }
        }
        return ran == nil ? GateGuard.updateChosenCode(context) : ExitCode.success
    }
}
