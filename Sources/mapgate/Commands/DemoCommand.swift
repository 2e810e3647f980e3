import FoundationEssentials
import MapGate
import MapGateDemo

private typealias L = Localization

/// `mapgate demo`: the main job on the bundled fixtures, against a local origin.
struct DemoCommand: Command {
    static let name = "demo"
    static let abstract = L.localized("Run the whole story on bundled fixtures against a local origin (no internet)")
    static let discussion = L.localized("""
        Starts a local HTTP origin on 127.0.0.1 over the project's Fixtures/ folder, points a
        throw-away configuration and data directory at it, and runs mapgate's main flow with a
        simulated clock: a newer version appears, the grace period passes, the uses count down,
        the gate closes, and updating opens it again.
        """)
    static let options = [
        OptionSpec(name: "fixtures", value: "DIR", help: L.localized("the Fixtures/ folder (default: ./Fixtures, else /usr/share/mapgate/demo when installed, else the checkout's)")),
        OptionSpec(name: "keep", help: L.localized("keep the throw-away folder and print where it is")),
    ]

    let fixtures: String?
    let keep: Bool

    init(parsing arguments: ParsedArguments) throws {
        try requireNoPositional(arguments, command: Self.self)
        fixtures = arguments.value("fixtures")
        keep = arguments.has("keep")
    }

    func run(_ context: Context) throws -> Int32 {
        let work = PathText.temporaryDirectory() + "mapgate-demo-\(UUID().uuidString.prefix(8))"
        // Private: nobody else may read or change the demo's data and its gate state.
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer {
            if keep {
                context.console.note(Localization.format(Localization.localized("demo files kept in %s"), work))
            } else {
                try? FileManager.default.removeItem(atPath: work)
            }
        }
        let console = context.console
        let demo = Demo(fixtures: fixtures ?? Self.defaultFixtures(), workDirectory: work) { event in
            switch event {
            case .step(let text):
                if context.json { console.json(Line(kind: "step", text: text)) } else { console.print(console.paint("==> ", .green) + console.paint(text, .bold)) }
            case .line(let text):
                if context.json { console.json(Line(kind: "line", text: text)) } else { console.print("    " + text) }
            }
        }
        let keepsServing = console.isInteractive && !context.json
        let server = try demo.run(keepsServing: keepsServing)
        if let server {
            if keepsServing {
                console.print(Localization.localized("The viewer is served until Ctrl-C."))
                SignalRouter.wait()
            }
            server.stop()
        }
        return ExitCode.success
    }

    /// `./Fixtures`, else the package's copy beside an installed binary
    /// (`<prefix>/bin/mapgate` → `<prefix>/share/mapgate/demo`), else the `Fixtures/` of the
    /// checkout the binary was built in (`<checkout>/.build/<triple>/<config>/mapgate`).
    static func defaultFixtures() -> String {
        let local = FileManager.default.currentDirectoryPath + "/Fixtures"
        if FileManager.default.fileExists(atPath: local) { return local }
        // The binary's own path: argv[0] is a bare name when found through PATH.
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? (CommandLine.arguments.first ?? "mapgate")
        var url = URL(fileURLWithPath: executable).resolvingSymlinksInPath()
        let installed = url.deletingLastPathComponent().deletingLastPathComponent().path + "/share/mapgate/demo"
        if FileManager.default.fileExists(atPath: installed + "/lookup") { return installed }
        for _ in 0..<5 {
            url.deleteLastPathComponent()
            let candidate = url.path + "/Fixtures"
            if FileManager.default.fileExists(atPath: candidate + "/lookup") { return candidate }
        }
        return local
    }

    /// One line of `demo --json`: a step's title or one of its lines.
    struct Line: Encodable {
        var kind: String
        var text: String
    }
}
