import Foundation
import MapGate

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
        let configuration = try Configuration.load(path: location.path, mustExist: location.mustExist)
        loadedConfiguration = configuration
        return configuration
    }

    var dataDirectory: DataDirectory {
        Locations.dataDirectory(flag: arguments.value("data-dir"), environment: environment)
    }

    func httpClient() throws -> HTTPClient {
        HTTPClient(caFile: try configuration().caFile)
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

    func makeGate() throws -> Gate {
        try Gate(state: try state(), configuration: try configuration(), client: try httpClient(), clock: clock)
    }

    func regionLibrary() throws -> RegionLibrary {
        RegionLibrary(directory: dataDirectory, state: try state())
    }
}
