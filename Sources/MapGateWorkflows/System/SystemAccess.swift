import FoundationEssentials

/// Who may ask the system service for what (issue 36), decided from the command line as the
/// command itself will read it and from the kernel's word on who asks: pure, and the one place
/// these rules are written.
public enum SystemAccess {
    /// Commands every local user may run: they read the machine's maps and gate.
    public static let viewing: Set<String> = ["list", "status", "check", "catalog", "verify", "tile", "open", "serve"]
    /// Commands that change the machine's maps: root and the administrators' group.
    public static let changing: Set<String> = ["sync", "remove"]
    /// The group the Debian package creates for the machine's map administrators.
    public static let administratorGroupName = "mapgate"

    /// Options the service never takes: each names a file or folder the service would read or
    /// write for the caller (`--config`, `--data-dir`, `sync --from`, `serve --share`,
    /// `tile -o`, which the command writes itself from the service's bytes), or something done
    /// as the service's user that belongs to the caller's session (`open --browser`).
    public static let refusedOptions: Set<String> = ["config", "data-dir", "from", "share", "output", "browser"]
    /// Options only administrators may give: a tile server on another address is the machine's
    /// maps offered beyond it.
    public static let administratorOptions: Set<String> = ["host", "allow-host"]

    /// Nil when the command may run; else why not.
    ///
    /// - Parameters:
    ///   - command: the command's name, nil when the line has none.
    ///   - options: the options given, by long name (without dashes), with their values (a
    ///     flag's is empty). `--output -` names no file: it is standard output, the caller's.
    ///   - isAdministrator: the caller is root or in the administrators' group.
    public static func check(command: String?, options: [String: String], isAdministrator: Bool) -> SystemRefusal? {
        guard let command, viewing.contains(command) || changing.contains(command) else {
            return SystemRefusal(.command, command ?? "")
        }
        let named = Set(options.keys.filter { !($0 == "output" && options[$0] == "-") })
        if let option = named.intersection(refusedOptions).sorted().first { return SystemRefusal(.option, option) }
        guard !isAdministrator else { return nil }
        if changing.contains(command) { return SystemRefusal(.administrator, command) }
        if let option = named.intersection(administratorOptions).sorted().first { return SystemRefusal(.administrator, "--" + option) }
        return nil
    }

    /// Whether the command line's command is one the service runs (else it runs where it was typed).
    public static func isServed(_ command: String) -> Bool { viewing.contains(command) || changing.contains(command) }
}
