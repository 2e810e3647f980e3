/// Refuses positional arguments for a command that takes none.
func requireNoPositional(_ arguments: ParsedArguments, command: any Command.Type) throws {
    if let extra = arguments.positional.first {
        throw UsageError(message: "unexpected argument '\(extra)'", usage: command.usage)
    }
}
