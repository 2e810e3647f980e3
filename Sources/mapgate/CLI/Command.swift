import MapGate

/// An option a command accepts (besides the global ones).
struct OptionSpec {
    var name: String
    var short: Character? = nil
    /// The value's placeholder (`PORT`), or nil for a flag.
    var value: String? = nil
    var help: String
}

/// A subcommand, in the shape of swift-argument-parser: a static description, `init(parsing:)`
/// that validates, and `run`.
protocol Command: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    /// The arguments after the command name, for the usage line (`REGION Z X Y`).
    static var arguments: String { get }
    static var discussion: String { get }
    static var options: [OptionSpec] { get }

    /// Reads the command's own arguments; throws ``UsageError`` when they are wrong.
    init(parsing arguments: ParsedArguments) throws

    /// Runs the command and returns the exit code. Errors go to the one error handler.
    func run(_ context: Context) throws -> Int32
}

extension Command {
    static var arguments: String { "" }
    static var discussion: String { "" }
    static var options: [OptionSpec] { [] }
    static var usage: String {
        var line = "mapgate \(name) " + L.localized("[options]")
        if !arguments.isEmpty { line += " \(arguments)" }
        return line
    }
}

/// The command line is wrong: exit 64 with the usage of the command.
struct UsageError: Error {
    var message: String
    var usage: String

    /// Refuses words that can name no region (a path, control characters, a route's name:
    /// ``RegionArgument/problem(_:)``) before the command does anything.
    static func requireRegion(_ typed: String, usage: String) throws {
        if let problem = RegionArgument.problem(typed) { throw UsageError(message: L.localized("not a region id: %1$s", "\(problem)"), usage: usage) }
    }
}
