import Foundation
import MapGate

/// `mapgate remove REGION`.
struct RemoveCommand: Command {
    static let name = "remove"
    static let abstract = "Remove an installed region"
    static let arguments = "REGION..."
    let regions: [String]

    init(parsing arguments: ParsedArguments) throws {
        guard !arguments.positional.isEmpty else { throw UsageError(message: "name the region to remove", usage: Self.usage) }
        regions = arguments.positional
    }

    func run(_ context: Context) throws -> Int32 {
        let lock = try context.lockDataDirectory()
        let library = try context.regionLibrary()
        for id in regions {
            let removed = try library.remove(id, lock: lock)
            if context.json {
                context.console.json(["region": id, "action": "removed", "version": removed.version])
            } else {
                context.console.print("removed \(id) \(removed.version)")
            }
        }
        return ExitCode.success
    }
}
