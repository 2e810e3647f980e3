import MapGate

private typealias L = Localization

/// Refuses positional arguments for a command that takes none.
func requireNoPositional(_ arguments: ParsedArguments, command: any Command.Type) throws {
    if let extra = arguments.positional.first {
        throw UsageError(message: L.localized("unexpected argument '%1$s'", "\(extra)"), usage: command.usage)
    }
}
