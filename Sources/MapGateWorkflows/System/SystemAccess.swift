import FoundationEssentials
import MapGateBase

/// Who may ask the system service for what (issue 36), decided from the command line as the
/// command itself will read it and from the kernel's word on who asks: pure, and the one place
/// these rules are written.
public enum SystemAccess {
    /// Commands every local user may run: they read the machine's maps and gate.
    public static let viewing: Set<String> = ["list", "status", "check", "catalog", "verify", "tile", "export", "open", "serve"]
    /// Commands that make the service reach the network for the machine (the store's lookup, the
    /// publisher's catalog, with the machine's credentials if it has any): a user who is not an
    /// administrator may run each once a minute (``SystemService/Settings/pacedInterval``), so
    /// that no user can make the machine flood the store or the publisher.
    public static let paced: Set<String> = ["check", "catalog"]
    /// Commands that change the machine's maps: root and the administrators' group.
    public static let changing: Set<String> = ["sync", "remove"]
    /// Commands that hand the machine's maps over whole, outside the gate: root and the
    /// administrators' group. `mirror DIR` writes the user's folder from the user's own process
    /// (``MirrorFolderHost``), through the socket the caller passed as descriptor 3.
    public static let handingOver: Set<String> = ["mirror"]
    /// The group the Debian package creates for the machine's map administrators.
    public static let administratorGroupName = "mapgate"

    /// Options the service never takes: each names a file or folder the service would read or
    /// write for the caller (`--config`, `--data-dir`, `serve --share`, `tile -o`, which the
    /// command writes itself from the service's bytes), or something done as the service's user
    /// that belongs to the caller's session (`open --browser`). `sync --from` is taken in two
    /// forms only: a mirror's http(s) URL, or ``passedFolder``, the folder the caller opened
    /// (with the caller's rights) and passed as the command's descriptor 3.
    public static let refusedOptions: Set<String> = ["config", "data-dir", "from", "share", "output", "browser"]
    /// `sync --from`'s value for the folder the caller passed, and `mirror`'s for its socket.
    public static let passedFolder = "/proc/self/fd/3"

    /// What the caller passed as the command's descriptor 3.
    public enum PassedDescriptor: Sendable {
        /// A folder (`sync --from DIR`).
        case folder
        /// A socket whose other end writes a folder of the caller's (`mirror DIR`).
        case socket
    }
    /// The tile server's own options (`serve`, `open`): in system mode the machine has one tile
    /// server, the service's, on the port its managed policy names (`systemTilePort`), for every
    /// user's sessions at once; no session sets it up.
    public static let machineServerOptions: Set<String> = ["host", "port", "allow-host", "max-connections", "tile-cache", "verbose"]
    /// The commands that are sessions of that server.
    public static let sessionCommands: Set<String> = ["serve", "open"]

    /// Nil when the command may run; else why not.
    ///
    /// - Parameters:
    ///   - command: the command's name, nil when the line has none.
    ///   - options: the options given, by long name (without dashes), with their values (a
    ///     flag's is empty). `--output -` names no file: it is standard output, the caller's.
    ///   - isAdministrator: the caller is root or in the administrators' group.
    ///   - passed: what the caller passed as descriptor 3, if anything.
    ///   - positional: the command line's operands. `export REGION FILE` is taken with `-` as
    ///     FILE only: the caller writes the file it names from the archive the service sends.
    ///   - group: the administrators' group as the service was told it, named in a refusal (nil:
    ///     ``administratorGroupName``).
    public static func check(
        command: String?, options: [String: String], isAdministrator: Bool, passed: PassedDescriptor? = nil, positional: [String] = [],
        group: String? = nil
    ) -> SystemRefusal? {
        guard let command, isServed(command) else {
            return SystemRefusal(.command, command ?? "")
        }
        if command == "export", positional.count >= 2, positional[1] != "-" { return SystemRefusal(.destination, positional[1]) }
        // `sync --from DIR`'s folder comes as the folder itself (an older client) or as a socket
        // to the caller's process that opens its files (``PassedFolderHost``).
        let readsPassed = command == "sync" && options["from"] == passedFolder
        let folder = passed == .folder || (passed == .socket && readsPassed)
        if passed == .folder, options["from"] != passedFolder { return SystemRefusal(.option, "from") }
        if handingOver.contains(command) {
            guard isAdministrator else { return SystemRefusal(.handsOver, command, group: group) }
            guard passed == .socket else { return SystemRefusal(.request, L.localized("'mirror' without the socket that writes its folder")) }
        } else if passed == .socket, !readsPassed {
            return SystemRefusal(.request, L.localized("a socket with a command other than 'mirror' or 'sync --from'"))
        }
        let named = Set(options.keys.filter { name in
            let value = options[name] ?? ""
            switch name {
            case "output": return value != "-"
            case "from": return value == passedFolder ? !folder : !(value.lowercased().hasPrefix("http://") || value.lowercased().hasPrefix("https://"))
            default: return true
            }
        })
        if let option = named.intersection(refusedOptions).sorted().first { return SystemRefusal(.option, option) }
        if sessionCommands.contains(command), let option = named.intersection(machineServerOptions).sorted().first {
            return SystemRefusal(.machineServer, option)
        }
        if changing.contains(command), !isAdministrator { return SystemRefusal(.administrator, command, group: group) }
        return nil
    }

    /// Whether the command line's command is one the service runs (else it runs where it was typed).
    public static func isServed(_ command: String) -> Bool { viewing.contains(command) || changing.contains(command) || handingOver.contains(command) }
}
