import Dispatch
import Foundation
import MapGate

#if canImport(Glibc)
import Glibc
#endif

/// `mapgate serve`: every installed region over local HTTP.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve installed regions over local HTTP (XYZ tiles, TileJSON, viewer)"
    static let discussion = """
        Routes: / (region list; JSON with Accept: application/json), /REGION.json (TileJSON 3.0.0),
        /REGION/Z/X/Y.EXT (XYZ tiles), /view/REGION (viewer page). Binds 127.0.0.1 unless --host
        says otherwise. Starting is a use of the update gate; a running server counts one use per
        24 hours of serving after the grace period and answers 403 once the gate closes.
        Stops cleanly on Ctrl-C (SIGINT) or SIGTERM.
        """
    static let options = [
        OptionSpec(name: "host", value: "ADDRESS", help: "address to bind (default 127.0.0.1)"),
        OptionSpec(name: "port", short: "p", value: "PORT", help: "port to listen on (default 8080; 0 picks a free one)"),
        OptionSpec(name: "verbose", short: "v", help: "log each request on stderr"),
    ]

    let settings: HTTPServer.Settings
    let verbose: Bool

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
        settings = try Self.settings(arguments, defaultPort: 8080, usage: Self.usage)
        verbose = arguments.has("verbose")
    }

    static func settings(_ arguments: ParsedArguments, defaultPort: UInt16, usage: String) throws -> HTTPServer.Settings {
        var settings = HTTPServer.Settings()
        settings.host = arguments.value("host") ?? "127.0.0.1"
        settings.port = defaultPort
        if let text = arguments.value("port") {
            guard let port = UInt16(text) else { throw UsageError(message: "--port \(text) is not a port number (0-65535)", usage: usage) }
            settings.port = port
        }
        return settings
    }

    func run(_ context: Context) throws -> Int32 {
        // Bind first, count second: a busy port or a bad setting costs no use.
        let launch = try ServerLaunch(context, settings: settings, verbose: verbose)
        guard let authorization = try GateGuard.authorize(context) else { return ExitCode.success }
        let server = try launch.start(authorization: authorization)
        let count = server.service.regions.count
        if context.json {
            context.console.json(["url": server.baseURL + "/", "regions": count])
        } else {
            context.console.print("serving \(count) \(count == 1 ? "region" : "regions") at \(server.baseURL)/ (Ctrl-C to stop)")
        }
        waitForTermination()
        context.console.note("stopping…")
        server.stop()
        return ExitCode.success
    }
}

/// The access log line of `--verbose`: method, path, status, bytes, time.
@Sendable func logRequest(_ entry: HTTPServer.LogEntry) {
    let line = "\(entry.method) \(entry.path) \(entry.status) \(entry.bytes) \(String(format: "%.1f", entry.seconds * 1000)) ms\n"
    FileHandle.standardError.write(Data(line.utf8))
}

/// Blocks until SIGINT or SIGTERM.
func waitForTermination() {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let done = DispatchSemaphore(value: 0)
    let sources = [SIGINT, SIGTERM].map { number in
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { done.signal() }
        source.resume()
        return source
    }
    done.wait()
    sources.forEach { $0.cancel() }
}
