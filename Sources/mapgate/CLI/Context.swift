import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// What a command runs with: its settings, the console, and the library's parts.
final class Context {
    let arguments: ParsedArguments
    let console: Console
    let environment: [String: String]
    let clock = Clock.system
    private var loadedConfiguration: Configuration?

    init(arguments: ParsedArguments, environment: [String: String]) {
        self.arguments = arguments
        self.environment = environment
        console = Console(quiet: arguments.has("quiet"), json: arguments.has("json"), environment: environment)
    }

    var json: Bool { arguments.has("json") }

    var configurationPath: (path: String, mustExist: Bool) {
        Locations.configFile(flag: arguments.value("config"), environment: environment)
    }

    /// The configuration, read once. Errors name the file and the key (exit 64).
    func configuration() throws -> Configuration {
        if let loadedConfiguration { return loadedConfiguration }
        let location = configurationPath
        let policy = Locations.policyFile(environment: environment).path
        let configuration = try Configuration.load(path: location.path, mustExist: location.mustExist, policyPath: policy)
        loadedConfiguration = configuration
        return configuration
    }

    /// The publisher's rules: the compiled-in profile with the managed policy applied, read once.
    /// A policy file that is not root's alone, or not valid, is an error (exit 64).
    func gateSettings() throws -> GateSettings {
        if let loadedSettings { return loadedSettings }
        let location = Locations.policyFile(environment: environment)
        let settings = try ManagedPolicy.apply(path: location.path, mustExist: location.mustExist)
        loadedSettings = settings
        return settings
    }

    private var loadedSettings: GateSettings?

    /// Whether this process is system mode's service (or a command it runs): the machine is in
    /// system mode and this is the policy's `systemUser`.
    func isSystemService() throws -> Bool {
        let settings = try gateSettings()
        guard settings.mode == .system, let service = SystemAccount.uid(settings.systemUser) else { return false }
        return getuid() == service
    }

    /// How long standard output may take nothing before a command's delivery: 60 s for the system
    /// service's commands, whose use is the machine's (a reader that takes nothing would hold it
    /// from every other user), for ever otherwise. Debug builds (the tests) may shorten it,
    /// never lengthen it, with `MAPGATE_OUTPUT_STALL_TIMEOUT`.
    var outputStallLimit: Double? {
        guard (try? isSystemService()) == true else { return nil }
        #if DEBUG
        if let shortened = environment["MAPGATE_OUTPUT_STALL_TIMEOUT"].flatMap(Double.init), shortened > 0 { return min(60, shortened) }
        #endif
        return 60
    }

    /// How long the caller's process of a system-mode `sync --from DIR` may take to answer
    /// (``PassedFolderSource/answerTimeout``); debug builds (the tests) may shorten it, never
    /// lengthen it, with `MAPGATE_PASSED_FOLDER_TIMEOUT`.
    var passedFolderTimeout: Double {
        #if DEBUG
        if let shortened = environment["MAPGATE_PASSED_FOLDER_TIMEOUT"].flatMap(Double.init), shortened > 0 {
            return min(PassedFolderSource.answerTimeout, shortened)
        }
        #endif
        return PassedFolderSource.answerTimeout
    }

    var dataDirectory: DataDirectory {
        Locations.dataDirectory(flag: arguments.value("data-dir"), environment: environment)
    }

    /// Where a folder this process may not enter is read from (system mode's `sync --from DIR`:
    /// through the caller's process); every client made from here on reads it so.
    var localFiles: (any LocalFileSource)?

    /// The client for the catalog and packages; in system mode's service, with the machine's
    /// catalog credentials (``CatalogCredentials``, which no user's process reads) for the
    /// catalog's host alone.
    func httpClient() throws -> HTTPClient {
        var client = HTTPClient(caFile: try configuration().caFile)
        client.localFiles = localFiles
        let settings = try gateSettings()
        if settings.mode == .system, SystemAccount.uid(settings.systemUser) == getuid(),
            let credentials = try CatalogCredentials.load(path: settings.credentialsFile),
            let host = try (configuration().catalogURL ?? settings.catalogURL).flatMap({ URLComponents(string: $0)?.host })
        {
            client.credentials = HTTPClient.HostCredentials(
                host: host, authorization: credentials.authorization, certificate: credentials.certificate, key: credentials.key)
        }
        return client
    }

    private var openedState: StateDatabase?

    /// The state database, opened once per run. A damaged one is replaced, with a warning.
    func state() throws -> StateDatabase {
        if let openedState { return openedState }
        let state = try StateDatabase(directory: dataDirectory, clock: clock)
        if let note = state.recoveryNote { console.warning(note) }
        openedState = state
        return state
    }

    /// The folder of the gate's own copy of its state (`$XDG_STATE_HOME/mapgate`).
    var stateFolder: String { Locations.stateFolder(environment: environment) }

    /// - Parameter createsDataDirectory: false for the commands that only look at the gate
    ///   (``GateStore/init(stateFolder:directory:clock:busyTimeout:createsDataDirectory:)``).
    func makeGate(createsDataDirectory: Bool = true) throws -> Gate {
        let store = try GateStore(stateFolder: stateFolder, directory: dataDirectory, clock: clock, createsDataDirectory: createsDataDirectory)
        let gate = try Gate(store: store, settings: try gateSettings(), clock: clock)
        // A command the system service runs for a user: the days its sessions pay are that user's.
        if let uid = environment[SystemService.Settings.callerUserVariable].flatMap(UInt32.init), try isSystemService() {
            gate.servingDayOwner = uid
        }
        return gate
    }

    /// Warns about what the gate found wrong with its saved copies (missing, damaged, edited).
    func warnAboutState(_ gate: Gate) {
        for note in gate.stateNotes { console.warning(note) }
    }

    /// The installed regions, for a command that writes them (`sync`, `remove`).
    func regionLibrary() throws -> RegionLibrary {
        RegionLibrary(directory: dataDirectory, state: try state())
    }

    /// The installed regions, for a command that only reads them (`list`, `verify`, `catalog`,
    /// `tile`, `open`, `serve`): works on a full disk and a read-only data directory, and creates
    /// nothing.
    func readOnlyRegionLibrary() throws -> RegionLibrary {
        if let openedState { return RegionLibrary(directory: dataDirectory, state: openedState) }
        return RegionLibrary(directory: dataDirectory, state: try StateDatabase.reading(directory: dataDirectory))
    }

    /// The installed regions for a command that only reads them (`list`, `verify`, `catalog`):
    /// nil when the data directory has no state database, which opening would create (a typo in
    /// `--data-dir` must not leave a new tree behind).
    func existingRegionLibrary() throws -> RegionLibrary? {
        guard FileManager.default.fileExists(atPath: dataDirectory.statePath) else {
            // A --data-dir naming a file is a mistake to say (found by an attack: `list` said
            // "no region is installed in /etc/passwd" with exit 0, where `status` failed).
            if let obstacle = FileManager.default.obstacleToFolder(atPath: dataDirectory.path) {
                throw GeneralFailure(L.localized("data directory %1$s: %2$s", dataDirectory.path, obstacle), kind: .io)
            }
            return nil
        }
        return try readOnlyRegionLibrary()
    }

    /// Says why there are no regions when ``existingRegionLibrary()`` found no data directory.
    var missingDataDirectoryNote: String {
        FileManager.default.fileExists(atPath: dataDirectory.path)
            ? L.localized("no region is installed in %1$s", "\(dataDirectory.path)") : L.localized("the data directory %1$s does not exist: no region is installed", "\(dataDirectory.path)")
    }
}
