import FoundationEssentials
import MapGate
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// A command on a machine in system mode (issue 36): unless this process is the system service's
/// own, the command runs in the service, which keeps the gate's record and the maps, and this
/// process only hands it the command line and its terminal (``SystemClient``), forwards its
/// signals and exits with the command's code. `tile -o FILE` and `export REGION FILE` are written
/// here, as the user, from the bytes the service sends: the service opens no file a user names.
enum SystemRelay {
    /// Commands that never touch the machine's maps or gate, and run where they are typed.
    static let local: Set<String> = ["publish", "demo", SystemServiceCommand.name]

    /// Runs the command in the system service and returns its exit code; nil when it runs here
    /// (per-user mode, a command of ``local``, or this process is the service's).
    static func run(_ arguments: ParsedArguments, argv: [String], context: Context) throws -> Int32? {
        let settings = try context.gateSettings()
        guard settings.mode == .system, let command = arguments.command, !local.contains(command) else { return nil }
        if let service = SystemAccount.uid(settings.systemUser), getuid() == service { return nil }
        guard SystemAccess.isServed(command) else { throw SystemRefusal(.command, command) }
        var forwarded = Array(argv.dropFirst())
        var streams: [Int32] = [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO]
        var output: OutputDestination.TemporaryFile?
        var opened: Int32 = -1
        var folder: Int32 = -1
        defer {
            if opened >= 0 { close(opened) }
            if folder >= 0 { close(folder) }
        }
        // `tile -o FILE` and `export REGION FILE`: the service writes the tile or the archive to
        // standard output; here it is what the user named, opened with the user's rights.
        var named: String?
        if command == TileCommand.name, let path = arguments.value("output"), path != "-" {
            named = path
            forwarded = replacing(["-o", "--output"], with: "-", in: forwarded)
        }
        if command == ExportCommand.name, arguments.positional.count == 2, arguments.positional[1] != "-" {
            let path = arguments.positional[1]
            try ExportCommand.refuseMBTilesName(path)
            named = path
            if let index = forwarded.lastIndex(of: path) { forwarded[index] = "-" }
        }
        // Standard output closed when this process started (`>&-`) holds /dev/null now
        // (``StandardStreams``): a tile or archive for it is refused here, before the service
        // counts a use for bytes nobody gets (found by an attack: it was counted, exit 0).
        if named == nil, StandardStreams.isOutputClosed,
            command == TileCommand.name || (command == ExportCommand.name && arguments.positional.count == 2)
        {
            _ = try OutputDestination.resolve("-")
        }
        if let path = named {
            let destination = try OutputDestination.resolve(path)
            try destination.refuse(inside: [context.dataDirectory.path, context.stateFolder])
            switch destination.kind {
            case .standardOutput:
                break
            case .writeThrough(let target, let append):
                // As `tile -o` opens it: a dangling link's file created, a FIFO's reader waited for.
                opened = try OutputDestination.openWriteThrough(target, append: append) { context.console.note(OutputDestination.waitingNote($0)) }
                streams[1] = opened
            case .replace(let target):
                let file = try OutputDestination.TemporaryFile(beside: target)
                output = file
                opened = file.descriptor
                streams[1] = opened
            }
        }
        var folderHost: BackgroundJob<Void>?
        var folderEnd: LocalSocket?
        if command == SyncCommand.name, let source = arguments.value("from"), !isURL(source, schemes: ["http", "https"]) {
            // A mirror's folder (a USB stick, an old per-user data directory's mirror): opened
            // here with the user's rights, and its files opened here as the service asks
            // (PassedFolderHost): the service may not enter the folder (a stick the desktop
            // mounted for its user alone), and its own rights decide nothing of the user's.
            let path = isURL(source, schemes: ["file"]) ? (URL(string: source)?.path ?? source) : source
            folder = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard folder >= 0 else {
                throw GeneralFailure(L.localized("--from %1$s: %2$s (a mirror is a folder written by 'mapgate mirror')", source, SystemErrorReason.text(errno)), kind: .usage)
            }
            let (ours, theirs) = try LocalSocket.pair(name: path)
            folderEnd = theirs
            streams.append(theirs.fileDescriptor)
            forwarded = replacing(["--from"], with: SystemAccess.passedFolder, in: forwarded)
            // The host's own descriptor of the folder: this one is closed when the run ends,
            // maybe before the host has seen the end of its socket.
            let own = fcntl(folder, F_DUPFD_CLOEXEC, 0)
            guard own >= 0 else { throw GeneralFailure(L.localized("--from %1$s: %2$s (a mirror is a folder written by 'mapgate mirror')", source, SystemErrorReason.text(errno)), kind: .io) }
            let named = PathText.standardized(path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
            folderHost = BackgroundJob { PassedFolderHost(folder: own, path: named, socket: ours).run() }
        }
        if command == MirrorCommand.name, let destination = arguments.positional.first, arguments.positional.count == 1 {
            // The service makes the packages; this process, with the user's rights, writes them
            // into the user's folder (the service cannot, and must not).
            let path = PathText.standardized(destination.hasPrefix("/") ? destination : FileManager.default.currentDirectoryPath + "/" + destination)
            let (ours, theirs) = try LocalSocket.pair(name: path)
            folderEnd = theirs
            streams.append(theirs.fileDescriptor)
            if let index = forwarded.lastIndex(of: destination) { forwarded[index] = path }
            folderHost = BackgroundJob { MirrorFolderHost(folder: LocalMirrorFolder(path: path), socket: ours).run() }
        }
        let policy = Locations.policyFile(environment: context.environment).path
        let client = try SystemClient.connect(to: settings.systemSocket, policy: policy)
        let socket = client.socket
        // A signal goes to the command until it has answered; one that comes after (while the
        // file it wrote is flushed and linked into place) changes nothing: the command counted
        // its use when it answered, so the file must be there (found by an attack: Ctrl-C during
        // a slow fsync left no file, and the use was spent), and the run ends with the command's
        // code, as a per-user run whose output is delivered does (``SignalRouter/finishingOutput(console:_:)``;
        // found by the next attack: it ended with 130 over a file in place and counted, and a
        // script that tries again on failure would spend another use).
        let finishing = Locked<(after: Bool, ended: Bool, withheld: Bool)>((false, false, false))
        // The socket outlives every send: the watcher below sends only before this.
        defer { finishing.withLock { $0.ended = true } }
        return try SignalRouter.forwarding(to: { number in
            // A continue into the background (`bg`) is kept from the command, which has no
            // terminal of its own to stop it there: it would read, and answer the question with,
            // the keys typed at the shell. It is sent once this process is in the foreground
            // again (`fg`, which need not send a running job a continue; found by an attack, in
            // the per-user run's likeness: after Ctrl-Z and `bg` the question read the shell's keys).
            if number == SIGCONT, Self.isInTheBackground() {
                let watching = finishing.withLock { state in
                    defer { state.withheld = true }
                    return state.withheld
                }
                if !watching { Self.continueInTheForeground(socket, finishing) }
                return
            }
            let forward = finishing.withLock { state in
                if number == SIGCONT { state.withheld = false }
                return !state.after && !state.ended
            }
            if forward { socket.sendByte(UInt8(number)) }
        }) {
            // Our end of the folder's socket (mirror, sync --from DIR) lives until it is sent (Swift
            // may otherwise end an object's life after its last use, closing the descriptor before
            // it is passed)...
            try withExtendedLifetime(folderEnd) {
                try client.send(SystemRequest(arguments: forwarded, environment: context.environment, relaysOutput: output != nil, outputName: named), streams: streams)
            }
            folderEnd = nil  // ...then the command's copy is the one left: its end ends the host
            let reply = try client.reply()
            finishing.withLock { $0.after = true }
            try? folderHost?.wait()
            if let refusal = reply.refusal {
                output?.discard()
                throw refusal
            }
            let code = reply.exitCode ?? ExitCode.failure
            // "Update now" at the question: nothing was written, and FILE stays as it was.
            if reply.declined == true {
                output?.discard()
                return ExitCode.success
            }
            if let output {
                if code == ExitCode.success {
                    guard fsync(output.descriptor) == 0 else {
                        throw OutputError(path: output.path, reason: "fsync: \(SystemErrorReason.text(errno))", kind: .io)
                    }
                    try output.moveIntoPlace()
                } else {
                    output.discard()
                }
            }
            // What the command would have said of FILE, said once it is there (the command said
            // nothing of its standard output: ``SystemRequest/relaysOutput``).
            if code == ExitCode.success, command == ExportCommand.name, let output, let path = named {
                let archive = try? PMTilesArchive(path: output.path)
                ExportCommand.report(
                    region: arguments.positional[0], file: path, tiles: Int(archive?.header.addressedTilesCount ?? 0),
                    bytes: FileManager.default.sizeOfItem(atPath: output.path), console: context.console, json: context.json,
                    replaced: true, onStandardError: false)
            }
            return code
        }
    }

    private static func isURL(_ text: String, schemes: [String]) -> Bool {
        schemes.contains { text.lowercased().hasPrefix($0 + "://") }
    }

    /// The command line with the value of the option `names` (`-o FILE`, `--output FILE`,
    /// `--output=FILE`) made `value`.
    private static func replacing(_ names: [String], with value: String, in arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += arguments[index...]
                break
            }
            if names.contains(argument) {
                result += [argument, value]
                index += 2
                continue
            }
            if let long = names.first(where: { $0.hasPrefix("--") && argument.hasPrefix($0 + "=") }) {
                result.append(long + "=" + value)
            } else {
                result.append(argument)
            }
            index += 1
        }
        return result
    }

    /// Whether this process is in the background of its controlling terminal (false without one,
    /// or when that cannot be told).
    private static func isInTheBackground() -> Bool {
        let terminal = open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard terminal >= 0 else { return false }
        defer { close(terminal) }
        let group = tcgetpgrp(terminal)
        return group >= 0 && group != getpgrp()
    }

    /// Sends the command the continue held back (``isInTheBackground()``) once this process is in
    /// the foreground, looking four times a second; gives up when the run ends or the continue
    /// went another way.
    private static func continueInTheForeground(
        _ socket: LocalSocket, _ finishing: Locked<(after: Bool, ended: Bool, withheld: Bool)>
    ) {
        try? Threads.detach(name: "foreground") {
            while true {
                usleep(250_000)
                let done = finishing.withLock { state -> Bool in
                    guard state.withheld, !state.after, !state.ended else { return true }
                    guard !isInTheBackground() else { return false }
                    state.withheld = false
                    socket.sendByte(UInt8(SIGCONT))
                    return true
                }
                if done { return }
            }
        }
    }
}
