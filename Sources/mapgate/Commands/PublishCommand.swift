import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc

private typealias L = Localization
#endif

/// `mapgate publish INPUT_DIR --out OUT_DIR --key SECRET_KEY_FILE`: the publisher's side.
struct PublishCommand: Command {
    static let name = "publish"
    static let abstract = L.localized("Make the signed catalog and packages of a folder of MBTiles or PMTiles files")
    static let arguments = "INPUT_DIR"
    static let discussion = L.localized("""
        Reads every .mbtiles file and PMTiles v3 archive (.pmtiles, converted to MBTiles in $TMPDIR
        first) of INPUT_DIR (and INPUT_DIR/regions.json, which may set "id", "name", "version" and
        "minimumAppVersion" per file name), checks each as sync would, and
        writes OUT_DIR/catalog.json, its minisign signature catalog.json.minisig and gzip packages
        in OUT_DIR/packages/, with deltas from the kept earlier versions. When nothing changed,
        nothing is written. OUT_DIR/.publish/ holds the history and the copies deltas are made
        from: keep it, but do not serve it. A password-protected key's password comes from
        $MAPGATE_KEY_PASSWORD, else from one line of standard input. Not a use of the update gate.

        A MapLibre style in INPUT_DIR/styles/NAME/style.json (sources "mbtiles://REGION", optional
        sprite.json and sprite.png beside it, and @2x) is checked, pointed at mapgate's local URLs
        and published as style NAME for sync to install with its regions.

        With --json, one object per region: region, action ("added", "updated", "unchanged",
        "removed"), version, previousVersion, package, size, sha256, deltas; then one per style:
        style, action, version, previousVersion, package, size, regions.
        """)
    static let options = [
        OptionSpec(name: "out", value: "OUT_DIR", help: L.localized("the folder to publish into (required)")),
        OptionSpec(name: "key", value: "SECRET_KEY_FILE", help: L.localized("the minisign secret key that signs the catalog (required but with --dry-run)")),
        OptionSpec(name: "base-url", value: "URL", help: L.localized("absolute URL OUT_DIR is served at (package URLs are relative without it)")),
        OptionSpec(name: "publisher", value: "NAME", help: L.localized("the catalog's publisher (default \"%1$s\")", "\(PublishOptions.defaultPublisher)")),
        OptionSpec(name: "expires-days", value: "N", help: L.localized("the catalog expires N days from now (default %1$s)", "\(PublishOptions.defaultExpiresDays)")),
        OptionSpec(name: "serial", value: "N", help: L.localized("the catalog's serial (default: the previous one + 1); always writes a new catalog")),
        OptionSpec(name: "keep", value: "N", help: L.localized("versions of each region kept in packages/ (default %1$s)", "\(PublishOptions.defaultKeep)")),
        OptionSpec(name: "dry-run", help: L.localized("say what would change, write nothing")),
    ]

    static let passwordVariable = "MAPGATE_KEY_PASSWORD"

    let options: PublishOptions
    let keyPath: String?
    let isDryRun: Bool

    init(parsing arguments: ParsedArguments) throws {
        guard arguments.positional.count == 1, let input = arguments.positional.first else {
            throw UsageError(message: L.localized("expected one INPUT_DIR"), usage: Self.usage)
        }
        guard let output = arguments.value("out") else { throw UsageError(message: L.localized("--out OUT_DIR is required"), usage: Self.usage) }
        isDryRun = arguments.has("dry-run")
        keyPath = arguments.value("key")
        if keyPath == nil, !isDryRun { throw UsageError(message: L.localized("--key SECRET_KEY_FILE is required"), usage: Self.usage) }
        func number(_ name: String) throws -> Int64? {
            guard let text = arguments.value(name) else { return nil }
            guard let value = Int64(text) else { throw UsageError(message: L.localized("--%1$s %2$s is not a whole number", "\(name)", "\(text)"), usage: Self.usage) }
            return value
        }
        // `out/` and `out` are one folder: no `out//catalog.json` in what is printed.
        let folder = output.count > 1 && output.hasSuffix("/") ? String(output.dropLast()) : output
        var options = PublishOptions(inputDirectory: input, outputDirectory: folder, baseURL: arguments.value("base-url"))
        if let publisher = arguments.value("publisher") { options.publisher = publisher }
        if let days = try number("expires-days") { options.expiresDays = Int(clamping: days) }
        if let keep = try number("keep") { options.keep = Int(clamping: keep) }
        options.serial = try number("serial")
        do {
            try options.validate()
        } catch let error as PublishError {
            throw UsageError(message: error.errorDescription ?? error.reason, usage: Self.usage)
        }
        self.options = options
    }

    func run(_ context: Context) throws -> Int32 {
        var options = self.options
        // `.pmtiles` inputs are converted in a folder of this run's under $TMPDIR, made when the
        // first is (found by an attack: a folder made by every run failed any publish under a
        // TMPDIR that cannot be written), removed when the run ends, by a signal too (found by an
        // attack: Ctrl-C left a 123 MB conversion there).
        let temporary = context.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let removal = SignalRouter.onSignal { _ in PMTilesInputs.removeFoldersOfThisProcess() }
        defer {
            PMTilesInputs.removeFoldersOfThisProcess()
            withExtendedLifetime(removal) {}
        }
        options.temporaryDirectory = temporary
        let publisher = Publisher(options: options, clock: context.clock)
        if isDryRun {
            try publisher.plan { render($0, context: context) }
            return ExitCode.success
        }
        // The input folder is looked at before the key's password is asked for.
        var isFolder = false
        guard FileManager.default.fileExists(atPath: options.inputDirectory, isDirectory: &isFolder), isFolder else {
            let exists = FileManager.default.fileExists(atPath: options.inputDirectory)
            throw PublishError(options.inputDirectory, exists ? L.localized("not a folder") : L.localized("no such folder"), kind: .usage)
        }
        let key = try loadKey(context)
        var bar: ProgressBar?
        defer { bar?.finish() }
        try publisher.publish(signingKey: key, progress: { _, done, total in bar?.update(done, of: total) }) { event in
            switch event {
            case .packing(let region, _):
                bar?.finish()
                bar = ProgressBar.isWanted(context.console) ? ProgressBar(label: region, console: context.console) : nil
            case .packed:
                bar?.finish()
                bar = nil
            default:
                render(event, context: context)
            }
        }
        return ExitCode.success
    }

    /// Reads the secret key; asks for its password only when it has one.
    private func loadKey(_ context: Context) throws -> MinisignSecretKey {
        guard let keyPath else { throw UsageError(message: L.localized("--key SECRET_KEY_FILE is required"), usage: Self.usage) }
        guard let data = FileManager.default.contents(atPath: keyPath) else {
            let reason =
                access(keyPath, F_OK) != 0
                ? L.localized("no such file") : access(keyPath, R_OK) != 0 ? L.localized("permission denied") : L.localized("not a readable file")
            throw GeneralFailure(L.localized("%1$s: cannot read the secret key (%2$s)", "\(keyPath)", "\(reason)"), kind: .io)
        }
        let text = String(decoding: data, as: UTF8.self)
        func fail(_ error: SignatureError) -> GeneralFailure {
            GeneralFailure("\(keyPath): \(errorMessage(error))", kind: .usage)
        }
        do {
            return try MinisignSecretKey(text: text, password: context.environment[Self.passwordVariable])
        } catch SignatureError.passwordRequired {
            guard let password = readPassword(context) else {
                throw GeneralFailure(
                    L.localized("%1$s: the key is password-protected: set %2$s or give the password on standard input", "\(keyPath)", "\(Self.passwordVariable)"),
                    kind: .usage)
            }
            do {
                return try MinisignSecretKey(text: text, password: password)
            } catch let error as SignatureError {
                throw fail(error)
            }
        } catch let error as SignatureError {
            throw fail(error)
        }
    }

    /// One line of standard input, without its newline; on a terminal asked for without echo.
    private func readPassword(_ context: Context) -> String? {
        guard context.console.isInteractive else { return readLine(strippingNewline: true) }
        var saved = termios()
        let canHide = tcgetattr(STDIN_FILENO, &saved) == 0
        if canHide {
            var hidden = saved
            hidden.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden)
        }
        UnixFile.standardError.write(Data(LocaleEncoding.bytes(L.localized("password for the secret key: "))))
        let line = readLine(strippingNewline: true)
        if canHide {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            UnixFile.standardError.write(Data("\n".utf8))
        }
        return line
    }

    /// What the user sees of a step: the notes, a line per region and per style, and how the
    /// catalog ended; the other steps show nothing but the progress bars.
    private func render(_ event: Publisher.Event, context: Context) {
        let console = context.console
        switch event {
        case .note(let note):
            console.warning(note)
        case .region(let region):
            if context.json {
                console.json(
                    RegionLine(
                        region: region.id, action: region.action.rawValue, version: region.version, previousVersion: region.previousVersion,
                        package: region.package, size: region.size, sha256: region.sha256, deltas: region.deltaCount))
            } else {
                console.print(line(for: region, isDryRun: isDryRun))
            }
        case .style(let style):
            if context.json {
                console.json(
                    StyleLine(
                        style: style.id, action: style.action.rawValue, version: style.version, previousVersion: style.previousVersion,
                        package: style.package, size: style.size, regions: style.regions))
            } else {
                console.print(line(for: style, isDryRun: isDryRun))
            }
        case .finished(let report):
            guard !context.json else { return }
            let serial = report.serial.map { L.localized("serial %1$s", String($0)) } ?? L.localized("no serial")
            if !report.catalogChanged {
                console.print(L.localized("no change: %1$s/catalog.json and its signature are left as they were", "\(options.outputDirectory)"))
            } else if report.isDryRun {
                console.print(L.localized("dry run: would write %1$s/catalog.json (%2$s); nothing was written", "\(options.outputDirectory)", "\(serial)"))
            } else {
                let count = report.removedFiles.count
                let removed = count == 0 ? "" : L.format(L.localized(", %d old file removed", ", %d old files removed", count: count), String(count))
                console.print(L.localized("wrote %1$s/catalog.json (%2$s) and its signature%3$s", "\(options.outputDirectory)", "\(serial)", "\(removed)"))
            }
        case .inputsChecked, .stylesChecked, .packing, .packed, .deltaMade, .stylePacked, .signed, .written:
            break
        }
    }

    /// "added", "updated from 3", "unchanged", "removed"; in a dry run "would be added", ….
    private func describe(_ action: PublishReport.Action, previousVersion: String?, isDryRun: Bool) -> String {
        let would = isDryRun && action != .unchanged
        switch action {
        case .added: return would ? L.localized("would be added") : L.localized("added")
        case .updated:
            guard let previousVersion else { return would ? L.localized("would be updated") : L.localized("updated") }
            return would ? L.localized("would be updated from %1$s", previousVersion) : L.localized("updated from %1$s", previousVersion)
        case .unchanged: return L.localized("unchanged")
        case .removed: return would ? L.localized("would be removed") : L.localized("removed")
        }
    }

    private func line(for style: PublishReport.Style, isDryRun: Bool) -> String {
        let what = describe(style.action, previousVersion: style.previousVersion, isDryRun: isDryRun)
        var details = style.regions.isEmpty ? [] : [L.localized("draws %1$s", style.regions.joined(separator: ", "))]
        if let size = style.size, style.action != .unchanged { details.append(Format.bytes(size)) }
        return L.localized("style %1$s %2$s: %3$s", style.id, style.version, what) + (details.isEmpty ? "" : L.localized(" (%1$s)", details.joined(separator: L.localized(", "))))
    }

    private func line(for region: PublishReport.Region, isDryRun: Bool) -> String {
        var details: [String] = []
        if let package = region.package, region.action != .unchanged { details.append(package) }
        if region.action != .unchanged, region.action != .removed {
            if let size = region.size {
                details.append(Format.bytes(size))
            } else if let installed = region.installedSize {
                details.append(L.localized("%1$s to compress", Format.bytes(installed)))
            }
            if region.deltaCount > 0 { details.append(L.format(L.localized("%d delta", "%d deltas", count: region.deltaCount), String(region.deltaCount))) }
        }
        let what = describe(region.action, previousVersion: region.previousVersion, isDryRun: isDryRun)
        // The colon is the language's (full width in Chinese and Japanese), as the style's line has it.
        return L.localized("%1$s %2$s: %3$s", region.id, region.version, what)
            + (details.isEmpty ? "" : L.localized(" (%1$s)", details.joined(separator: L.localized(", "))))
    }

    /// One region of `publish --json` (docs/commands.md).
    struct RegionLine: Encodable {
        var region: String
        var action: String
        var version: String
        var previousVersion: String?
        var package: String?
        var size: Int64?
        var sha256: String?
        var deltas: Int
    }

    /// One style of `publish --json`.
    struct StyleLine: Encodable {
        var style: String
        var action: String
        var version: String
        var previousVersion: String?
        var package: String?
        var size: Int64?
        var regions: [String]
    }
}
