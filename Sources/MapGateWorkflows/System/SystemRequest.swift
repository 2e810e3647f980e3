import FoundationEssentials

/// What a command sends the system service (issue 36): its command line and the few variables of
/// its environment that only change how output looks. The three descriptors of its standard
/// streams travel with the message (``LocalSocket/send(_:descriptors:)``); who sent it, the service
/// learns from the kernel, never from here.
public struct SystemRequest: Codable, Sendable, Equatable {
    /// The arguments after the program's name, as the user typed them.
    public var arguments: [String]
    /// Variables of ``passedVariables`` only; anything else is dropped by the service.
    public var environment: [String: String]
    /// The command's standard output is a file the caller links into place under the name the
    /// user gave (`tile -o FILE`, `export REGION FILE`, sent as `-`): the command then says
    /// nothing of it, and the caller says what it wrote (``SystemService/Settings/relayedOutputVariable``).
    public var relaysOutput: Bool?
    /// What the user named as the output the caller opened and passed as standard output
    /// (`tile -o /dev/full`, `export REGION FIFO`, sent as `-`): the command names its standard
    /// output so in what it says (found by an attack: "cannot write to standard output" for the
    /// FIFO the user named). Only shown, never opened; ``safeOutputName`` on the service's side.
    public var outputName: String?

    public init(arguments: [String], environment: [String: String], relaysOutput: Bool = false, outputName: String? = nil) {
        self.arguments = arguments
        self.environment = environment.filter { Self.passedVariables.contains($0.key) }
        self.relaysOutput = relaysOutput ? true : nil
        self.outputName = outputName
    }

    /// ``outputName`` as the service passes it on: at most 4,096 bytes, without NUL (an
    /// environment variable's value cannot hold one); what it holds is escaped where it is shown.
    public var safeOutputName: String? {
        guard let outputName, !outputName.isEmpty, outputName.utf8.count <= 4096, !outputName.utf8.contains(0) else { return nil }
        return outputName
    }

    /// The user's language, terminal and display preferences: nothing here decides what the
    /// service does, only how it says it. (Not `MAPGATE_*`, `XDG_*`, `HOME`, `LD_*`, proxies.)
    public static let passedVariables: Set<String> = [
        "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LC_CTYPE", "TERM", "COLUMNS", "NO_COLOR", "TZ",
    ]

    /// The most a request may be: a command line is far smaller.
    public static let sizeLimit = 64 * 1024

    /// `environment` checked again on the service's side: the passed names only, each value of
    /// the shape its variable has. A locale or language name with a `/` would make glibc and
    /// gettext load a locale or a message catalog from a path the caller chose (their format
    /// strings in the service's process); a `TZ` naming a path, a time zone file; so values are
    /// names, never paths.
    public var safeEnvironment: [String: String] {
        environment.filter { key, value in
            guard Self.passedVariables.contains(key), !value.isEmpty, value.utf8.count <= 128 else { return false }
            func only(_ allowed: String) -> Bool { value.unicodeScalars.allSatisfy { allowed.unicodeScalars.contains($0) || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) } }
            switch key {
            case "COLUMNS": return value.allSatisfy(\.isASCII) && Int(value) != nil
            case "TERM": return only("._+-")
            case "TZ": return only("_+-/") && !value.hasPrefix("/") && !value.contains("..")
            case "NO_COLOR": return value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
            default: return only("_.@:-") && !value.contains("..")  // LANG, LANGUAGE, LC_*
            }
        }
    }
}

/// The service's answer: the command's exit code once it ran, or why it did not run (the caller
/// exits with the refusal's kind, as for any other error).
public struct SystemReply: Codable, Sendable, Equatable {
    public var exitCode: Int32?
    public var refusal: SystemRefusal?
    /// The user chose "update now" at the question of a command whose output the caller relays
    /// (``SystemService/Settings/declinedExitCode``): nothing was written, and the caller leaves
    /// the file it was to replace as it is.
    public var declined: Bool?

    public init(exitCode: Int32) {
        self.exitCode = exitCode
    }

    public init(refusal: SystemRefusal) {
        self.refusal = refusal
    }
}
