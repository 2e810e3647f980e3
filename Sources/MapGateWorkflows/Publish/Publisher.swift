import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage
import MapGateTrust

/// The publisher's side of map packages: turns a folder of MBTiles files into the static tree
/// `sync` reads (`catalog.json`, `catalog.json.minisig`, `packages/`), keeping earlier versions
/// and deltas from them.
///
/// `OUT_DIR/.publish/` holds what it remembers (`history.json`) and the MBTiles copies deltas are
/// made from (`bases/`); it is not meant to be served. Nothing is changed when no region changed.
///
/// One use case, as `sync`'s ``SyncWorkflow`` is: it owns the order of its steps (check the
/// inputs, check the styles, build the packages, the deltas, the style packages, compare with
/// the previous catalog, make, sign and write the new one) and reports each as an ``Event``;
/// `mapgate publish` renders them. Not `Sendable`: one publish runs on one thread (which starts its own helpers).
public final class Publisher {
    public let options: PublishOptions
    let clock: Clock
    /// The MBTiles files made from `.pmtiles` inputs in this run, by the archive each came from
    /// (``PMTilesInputs``); removed when the run ends.
    var conversions = PMTilesInputs()

    public init(options: PublishOptions, clock: Clock = .system) {
        self.options = options
        self.clock = clock
    }

    var catalogPath: String { options.outputDirectory + "/catalog.json" }
    var signaturePath: String { catalogPath + ".minisig" }
    var packagesPath: String { options.outputDirectory + "/packages" }
    var statePath: String { options.outputDirectory + "/.publish" }
    var historyPath: String { statePath + "/history.json" }
    var basesPath: String { statePath + "/bases" }
    var scratchPath: String { statePath + "/tmp" }

    /// What a publish would do, without writing anything: the inputs are read and checked as
    /// they would be, but no package is made (sizes and hashes of new packages are unknown).
    @discardableResult
    public func plan(onEvent: (Event) -> Void = { _ in }) throws -> PublishReport {
        try run(signingKey: nil, progress: { _, _, _ in }, onEvent: onEvent)
    }

    /// Publishes: makes the packages and deltas of new versions, writes and signs the catalog,
    /// and removes versions beyond ``PublishOptions/keep``. `progress` gets (region id, bytes read,
    /// bytes in total) while a package is compressed; `onEvent` each step's outcome (``Event``).
    @discardableResult
    public func publish(
        signingKey: MinisignSecretKey, progress: (String, Int64, Int64) -> Void = { _, _, _ in }, onEvent: (Event) -> Void = { _ in }
    ) throws -> PublishReport {
        try run(signingKey: signingKey, progress: progress, onEvent: onEvent)
    }

    /// The order of a publish (without a key: of a dry run). Nothing is written before every
    /// input and style was checked, and the catalog is the last thing written; what each region
    /// and style came to is told once the catalog is settled (written, left as it was, or in a
    /// dry run what would be), so a publish that is refused tells none.
    private func run(signingKey: MinisignSecretKey?, progress: (String, Int64, Int64) -> Void, onEvent: (Event) -> Void) throws -> PublishReport {
        defer { conversions.removeAll() }
        do {
            // One publish at a time in a folder (found by an attack: two at once both wrote serial
            // 2, with other contents, and one's regions were lost): the lock is held from before
            // the previous catalog and the history are read until the catalog is written.
            // A refused run leaves no trace of the lock in a folder it made for it.
            let lock = signingKey == nil ? nil : try lockOutput()
            do {
                let report = try runSteps(signingKey: signingKey, progress: progress, onEvent: onEvent)
                withExtendedLifetime(lock) {}
                return report
            } catch {
                if let lock { for path in lock.created.reversed() { _ = path.hasSuffix("/lock") ? unlink(path) : rmdir(path) } }
                throw error
            }
        } catch let error as PublishError {
            // What was said of a converted file is said of the archive the publisher gave.
            throw conversions.namingArchives(error)
        }
    }

    private func runSteps(signingKey: MinisignSecretKey?, progress: (String, Int64, Int64) -> Void, onEvent: (Event) -> Void) throws -> PublishReport {
        let isDryRun = signingKey == nil
        if !isDryRun {
            // What killed publishes left in the folder a static host serves.
            for folder in [options.outputDirectory, options.outputDirectory + "/packages"] { AtomicFile.removeLeftovers(in: folder) }
        }
        let inputs = try checkInputs()
        onEvent(.inputsChecked(regions: inputs.sources.map(\.id)))
        let styles = try PublishedStyle.readAll(input: options.inputDirectory, regions: inputs.formats)
        onEvent(.stylesChecked(styles: styles.map(\.id)))
        var versions = try buildPackages(inputs, isDryRun: isDryRun, progress: progress, onEvent: onEvent)
        let deltaNotes = isDryRun ? [:] : makeDeltas(&versions, inputs: inputs, onEvent: onEvent)
        let styleResults = try publishStyles(styles, previous: inputs.previous, isDryRun: isDryRun, onEvent: onEvent)
        let draft = compare(inputs, versions: versions, deltaNotes: deltaNotes, styles: styles, styleResults: styleResults, isDryRun: isDryRun)
        let report = try writeCatalog(draft, inputs: inputs, signingKey: signingKey, onEvent: onEvent)
        for note in report.notes { onEvent(.note(note)) }
        for region in report.regions { onEvent(.region(region)) }
        for style in report.styles { onEvent(.style(style)) }
        onEvent(.finished(report))
        return report
    }

    /// The serial the signature at `path` names in its trusted comment (`serial:N`, as `publish`
    /// writes it), if it reads.
    static func signedSerial(at path: String) -> Int64? {
        guard let data = FileManager.default.contents(atPath: path), let signature = try? MinisignSignature(data: data) else { return nil }
        return signature.trustedComment.split(separator: "\t").lazy.compactMap { $0.hasPrefix("serial:") ? Int64($0.dropFirst("serial:".count)) : nil }.first
    }

    /// What the inputs are: the files of the input folder in order, what is done with each, their
    /// tile formats, and what the output folder remembers.
    struct Inputs {
        var sources: [PublishSource]
        var decisions: [Decision]
        var formats: [String: TileFormat]
        var previous: PreviousCatalog?
        var history: PublishHistory
    }

    /// Reads and checks everything but the styles before anything is written: the options, the
    /// input files (every region that will be made: its file and facts; one kept as it was is not
    /// read again, its format is in the history), the previous catalog and the history.
    private func checkInputs() throws -> Inputs {
        try options.validate()
        let (sources, unreadable, count) = try readSources()
        let previous = try PreviousCatalog.load(path: catalogPath)
        let history = try PublishHistory.load(path: historyPath)
        if let serial = options.serial, let old = previous?.serial, serial <= old {
            throw PublishError("--serial \(serial)", "must be above the current catalog's serial \(old) (clients refuse a lower one)", kind: .usage)
        }
        // A folder that has published (its history knows versions) and lost its catalog (moved
        // away as the error for one that cannot be read advises, or deleted): a catalog from
        // serial 1 would be refused by every client that has the last one, and the publisher's
        // gate rules it held would be gone without a word (found by an attack: exit 0, serial 1,
        // no `gate`).
        if previous == nil, options.serial == nil, !history.regions.isEmpty {
            throw PublishError(
                catalogPath,
                L.localized(
                    "it is missing, and %1$s shows this folder has published before: a new catalog would start again at serial 1, which every client that has the last one refuses, without the gate rules it held; put it back, or publish with --serial above the last serial published (and add its gate rules again)",
                    historyPath),
                kind: .usage)
        }
        // The same for a catalog edited by hand to have no serial, and for a `--serial` at or
        // below the serial the signature left beside a lost catalog names (found by the attack
        // on the fix above: both were signed, and every client refused them as rollbacks).
        if let previous, previous.serial == nil, options.serial == nil, !history.regions.isEmpty {
            throw PublishError(
                catalogPath,
                L.localized("it has no serial, and %1$s shows this folder has published before: publish with --serial above the last serial published", historyPath),
                kind: .usage)
        }
        if previous == nil, let serial = options.serial, let signed = Self.signedSerial(at: signaturePath), serial <= signed {
            throw PublishError(
                "--serial \(serial)",
                L.localized("must be above the serial %1$s that %2$s names (clients refuse a lower one)", "\(signed)", signaturePath),
                kind: .usage)
        }
        // The next catalog's serial must fit, checked before any package is written.
        if options.serial == nil, let old = previous?.serial, old >= PublishOptions.maximumSerial {
            throw PublishError(
                catalogPath,
                L.localized("its serial %1$s leaves no room for the next catalog's (publish writes at most %2$s), and clients refuse a serial lower than one they have seen", "\(old)", "\(PublishOptions.maximumSerial)"))
        }
        var decisions: [Decision] = []
        var formats: [String: TileFormat] = [:]
        // Every file's checks before stopping, as for reading them (found by an attack: a folder
        // with a bad `scheme` or `center` in two files told of the first only).
        var problems = unreadable
        for source in sources {
            do {
                let decision = try decide(source, history: history)
                switch decision {
                case .reuse(let kept): formats[source.id] = TileFormat(rawValue: kept.format)
                case .make: formats[source.id] = try RegionFacts.read(path: source.path, hashing: false).format
                }
                decisions.append(decision)
            } catch let error as PublishError {
                problems.append(conversions.namingArchives(error))
            }
        }
        try throwProblems(problems.sorted { $0.subject < $1.subject }, of: count)
        try checkPackageNames(sources, history: history)
        return Inputs(sources: sources, decisions: decisions, formats: formats, previous: previous, history: history)
    }

    /// Each region's version, in the order of the inputs: the one published before, or a new
    /// package (in a dry run, the version as it would be, with no package).
    private func buildPackages(
        _ inputs: Inputs, isDryRun: Bool, progress: (String, Int64, Int64) -> Void, onEvent: (Event) -> Void
    ) throws -> [PublishedVersion] {
        var versions: [PublishedVersion] = []
        for (source, decision) in zip(inputs.sources, inputs.decisions) {
            switch decision {
            case .reuse(let kept):
                versions.append(kept)
            case .make(let sha, let identity, let repairing):
                if let repairing {
                    // Said, since the catalog (the same bytes) is left as it was.
                    onEvent(
                        .note(
                            L.localized(
                                "region %1$s %2$s: %3$s; its package and deltas are made again from its input, the same bytes as published", source.id,
                                source.version, repairing)))
                }
                if isDryRun {
                    versions.append(try provisionalVersion(source, sourceSHA256: sha))
                } else {
                    try prepareFolders()
                    onEvent(.packing(region: source.id, version: source.version))
                    // Known to the history: a package made again repairs the one in place.
                    let known = inputs.history.regions[source.id]?.contains { $0.version == source.version } ?? false
                    let made = try makePackage(source, sourceSHA256: sha, identity: identity, previous: known ? nil : inputs.previous) {
                        progress(source.id, $0, $1)
                    }
                    onEvent(.packed(region: source.id, package: "packages/" + made.package, size: made.size))
                    versions.append(made)
                }
            }
        }
        return versions
    }

    /// The `.mbtiles` and `.pmtiles` files of the input folder, sorted by name, with their
    /// identities; each archive is read as the MBTiles file made from it (``PMTilesInputs``).
    /// The files that cannot be read are in `problems` (the caller checks the others before it
    /// says them all), of `count` files in all.
    func readSources() throws -> (sources: [PublishSource], problems: [PublishError], count: Int) {
        let input = options.inputDirectory
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory else {
            let exists = FileManager.default.fileExists(atPath: input)
            throw PublishError(input, exists ? L.localized("not a folder") : L.localized("no such folder"), kind: .usage)
        }
        let names: [String]
        let hidden: [String]
        do {
            let listed = try FileManager.default.contentsOfDirectory(atPath: input).filter { TileStoreKind(fileName: $0) != nil }
            names = listed.filter { !$0.hasPrefix(".") }.sorted()
            hidden = listed.filter { $0.hasPrefix(".") }.sorted()
        } catch {
            throw PublishError(input, L.localized("cannot list it: %1$s", "\(errorMessage(error))"), kind: .io)
        }
        guard !names.isEmpty else {
            // Hidden files are not read: said when they are all there is (found by an attack: a
            // folder of `.x.mbtiles` was said to hold no file).
            if let first = hidden.first {
                throw PublishError(input, L.localized("no .mbtiles or .pmtiles file in it but hidden ones (%1$s), which publish does not read: rename them", TerminalText.inline(first)))
            }
            throw PublishError(input, L.localized("no .mbtiles or .pmtiles file in it"))
        }
        let overridesPath = input + "/regions.json"
        let overrides = try RegionOverride.load(path: overridesPath)
        if let stray = overrides.keys.sorted().first(where: { !names.contains($0) }) {
            throw PublishError(overridesPath, L.localized("\"%1$s\" names no .mbtiles or .pmtiles file in %2$s", "\(stray)", "\(input)"))
        }
        var sources: [PublishSource] = []
        var owners: [String: String] = [:]
        // Every input is looked at before stopping: a folder of 40 files with 3 bad ones is one run.
        var problems: [PublishError] = []
        let folder = input.hasSuffix("/") ? String(input.dropLast()) : input
        for name in names {
            do {
                let path = folder + "/" + name
                // A name that is not UTF-8 is listed with U+FFFD in place of its bad bytes, and no
                // file has that name (found by an attack: "cannot be read: no such file").
                if name.contains("\u{FFFD}"), !FileManager.default.fileExists(atPath: path) {
                    throw PublishError(
                        path, L.localized("its file name is not UTF-8 (shown with \u{FFFD} in place of what is not): give it a UTF-8 name"))
                }
                var source: PublishSource
                if TileStoreKind(fileName: name) == .pmtiles {
                    let converted = try conversions.convert(path, temporaryDirectory: options.temporaryDirectory)
                    source = try PublishSource.read(path: converted, override: overrides[name], fileName: name)
                    source.archivePath = path
                } else {
                    source = try PublishSource.read(path: path, override: overrides[name])
                }
                if let other = owners[source.id] {
                    throw PublishError(source.path, L.localized("region id \"%1$s\" is also the id of %2$s; set distinct ids in regions.json", "\(source.id)", "\(other)"))
                }
                owners[source.id] = name
                sources.append(source)
            } catch let error as PublishError {
                problems.append(conversions.namingArchives(error))
            }
        }
        return (sources, problems, names.count)
    }

    /// Throws the one problem found, or all of them as one error naming the input folder.
    private func throwProblems(_ problems: [PublishError], of count: Int) throws {
        if problems.count == 1 { throw problems[0] }
        guard !problems.isEmpty else { return }
        let input = options.inputDirectory
        let folder = input.hasSuffix("/") ? String(input.dropLast()) : input
        let lines = problems.map { "  " + ($0.errorDescription ?? $0.reason) }.joined(separator: "\n")
        let kind = Set(problems.map(\.kind)).count == 1 ? problems[0].kind : .badData
        throw PublishError(folder, L.localized("%1$s of its %2$s tile files cannot be published; nothing was written:\n", "\(problems.count)", "\(count)") + lines, kind: kind)
    }

    /// Refuses two region versions whose packages (or base copies) would have one file name
    /// (found by an attack: region `a` version `b-1` and region `a-b` version `1` are both
    /// `a-b-1.mbtiles.gz`, and one overwrote the other under a signed catalog): ids and versions
    /// may both hold `-`, so the name alone does not tell them apart.
    private func checkPackageNames(_ sources: [PublishSource], history: PublishHistory) throws {
        var owners: [String: (id: String, version: String)] = [:]
        func claim(_ name: String, _ id: String, _ version: String, subject: String) throws {
            if let owner = owners[name], owner != (id, version) {
                throw PublishError(
                    subject,
                    L.localized(
                        "region %1$s version \"%2$s\" and region %3$s version \"%4$s\" would both be packages/%5$s; give one of them another version in regions.json",
                        owner.id, owner.version, id, version, name))
            }
            owners[name] = (id, version)
        }
        for (id, versions) in history.regions.sorted(by: { $0.key < $1.key }) {
            for version in versions {
                try claim(version.package, id, version.version, subject: historyPath)
                if let base = version.base { try claim(base, id, version.version, subject: historyPath) }
                for delta in version.deltas { try claim(delta.package, id, version.version, subject: historyPath) }
            }
        }
        for source in sources {
            try claim(Self.packageName(source), source.id, source.version, subject: source.archivePath ?? source.path)
            try claim(Self.baseName(source), source.id, source.version, subject: source.archivePath ?? source.path)
            // And the deltas this run may make to it (found by an attack: region `a` version
            // `2-to-3` and region `a-1-to` version `3`, both from versions 1 and 2, had one delta
            // file, and the catalog listed it twice with two sizes).
            for base in deltaBases(of: source, in: history) {
                try claim(Self.deltaName(source, from: base.version), source.id, source.version, subject: source.archivePath ?? source.path)
            }
        }
    }

    /// How one input is handled.
    enum Decision {
        /// Published before from the very same file: its package is reused.
        case reuse(PublishedVersion)
        /// A new version: make its package (and deltas). `identity`: the input file's when its
        /// hash was taken; a file that changes before its package is made is refused.
        case make(sourceSHA256: String, identity: FileIdentity?, repairing: String? = nil)
    }

    private func decide(_ source: PublishSource, history: PublishHistory) throws -> Decision {
        let identity = FileIdentity(path: source.archivePath ?? source.path)
        let sha = try SHA256Hasher.hex(ofFileAt: source.archivePath ?? source.path)
        let versions = history.regions[source.id] ?? []
        guard let record = versions.first(where: { $0.version == source.version }) else {
            // A version trimmed away comes back only from the same file.
            if let retired = history.retired?[source.id]?[source.version], retired != sha {
                throw PublishError(
                    source.path,
                    L.localized("version \"%1$s\" of region %2$s was published before from another file (no longer kept, but clients may have it); raise the version (metadata \"version\" or regions.json)", "\(source.version)", "\(source.id)"))
            }
            return .make(sourceSHA256: sha, identity: identity)
        }
        guard record.sourceSHA256 == sha else {
            throw PublishError(
                source.path,
                L.localized("version \"%1$s\" of region %2$s was published before from another file; raise the version (metadata \"version\" or regions.json)", "\(source.version)", "\(source.id)"))
        }
        // A package someone removed by hand, or that is not its own any more (cut short on the
        // host: found by an attack; other bytes of the same size, a link: found by the next), is
        // made again, with its deltas; so is one of its deltas the catalog lists (found by an
        // attack: a delta cut short stayed, and every client fetched it, refused it and fell back
        // to the whole package).
        let files = [(record.package, record.size, record.sha256)] + record.deltas.map { ($0.package, $0.size, $0.sha256) }
        for (name, size, sha256) in files {
            if let problem = Self.problem(with: packagesPath + "/" + name, size: size, sha256: sha256) {
                return .make(sourceSHA256: sha, identity: identity, repairing: "packages/\(name) \(problem)")
            }
        }
        return .reuse(record)
    }

    /// What is wrong with a published file, if anything: not a regular file of its own (a link,
    /// a FIFO, missing), not its size, or not its SHA-256 (read only when the size is right).
    static func problem(with path: String, size: Int64, sha256: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return L.localized("is missing") }
        guard info.st_mode & S_IFMT == S_IFREG else { return L.localized("is not a regular file") }
        guard Int64(info.st_size) == size else { return L.localized("is %1$s bytes, %2$s were published", "\(info.st_size)", "\(size)") }
        guard let hash = try? SHA256Hasher.hex(ofFileAt: path) else { return L.localized("cannot be read") }
        guard hash == sha256 else { return L.localized("has SHA-256 %1$s…, %2$s… was published", String(hash.prefix(12)), String(sha256.prefix(12))) }
        return nil
    }

    /// Takes `.publish/lock` in the output folder; another publish holding it is an error at once.
    /// `created`: the folders and the lock file this made, for a refused run to remove.
    private func lockOutput() throws -> (lock: DirectoryLock, created: [String]) {
        let lockPath = statePath + "/lock"
        let created = [options.outputDirectory, statePath, lockPath].filter { !FileManager.default.fileExists(atPath: $0) }
        do {
            try FileManager.default.createDirectory(atPath: statePath, withIntermediateDirectories: true)
        } catch {
            throw PublishError(statePath, L.localized("cannot create it: %1$s", "\(FileManager.default.folderCreationReason(atPath: statePath, error: error))"), kind: .io)
        }
        return (try DirectoryLock(lockPath: lockPath, folder: options.outputDirectory, timeout: 0), created)
    }

    func prepareFolders() throws {
        for folder in [options.outputDirectory, packagesPath, statePath, basesPath, scratchPath] {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw PublishError(folder, L.localized("cannot create it: %1$s", "\(FileManager.default.folderCreationReason(atPath: folder, error: error))"), kind: .io)
            }
        }
    }

    /// Writes `data` to a temporary file beside `path`, fsynced, then renames it over `path` and
    /// fsyncs the folder (``AtomicFile``: its `.NAME.PID.tmp` is removed by the next publish if a
    /// kill leaves it, where Foundation's `.atomic` left `.dat.nosync*` files a static host served).
    func write(_ data: Data, to path: String) throws {
        do {
            try AtomicFile.write(data, to: path)
        } catch {
            throw PublishError(path, L.localized("cannot write it: %1$s", "\(errorMessage(error))"), kind: .io)
        }
    }
}
