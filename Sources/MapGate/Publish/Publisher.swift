import FoundationEssentials

/// The publisher's side of map packages: turns a folder of MBTiles files into the static tree
/// `sync` reads (`catalog.json`, `catalog.json.minisig`, `packages/`), keeping earlier versions
/// and deltas from them.
///
/// `OUT_DIR/.publish/` holds what it remembers (`history.json`) and the MBTiles copies deltas are
/// made from (`bases/`); it is not meant to be served. Nothing is changed when no region changed.
/// Not `Sendable`: one publish runs on one thread (which starts its own helpers).
public final class Publisher {
    public let options: PublishOptions
    private let clock: Clock

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
    public func plan() throws -> PublishReport {
        try run(signingKey: nil, progress: { _, _, _ in })
    }

    /// Publishes: makes the packages and deltas of new versions, writes and signs the catalog,
    /// and removes versions beyond ``PublishOptions/keep``. `progress` gets (region id, bytes read,
    /// bytes in total) while a package is compressed.
    @discardableResult
    public func publish(signingKey: MinisignSecretKey, progress: (String, Int64, Int64) -> Void = { _, _, _ in }) throws -> PublishReport {
        try run(signingKey: signingKey, progress: progress)
    }

    /// The `.mbtiles` files of the input folder, sorted by name, with their identities.
    func readSources() throws -> [PublishSource] {
        let input = options.inputDirectory
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory else {
            throw PublishError(input, "not a folder", kind: .usage)
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: input).filter { $0.hasSuffix(".mbtiles") }.sorted()
        } catch {
            throw PublishError(input, "cannot list it: \(errorMessage(error))", kind: .io)
        }
        guard !names.isEmpty else { throw PublishError(input, "no .mbtiles file in it") }
        let overridesPath = input + "/regions.json"
        let overrides = try RegionOverride.load(path: overridesPath)
        if let stray = overrides.keys.sorted().first(where: { !names.contains($0) }) {
            throw PublishError(overridesPath, "\"\(stray)\" names no .mbtiles file in \(input)")
        }
        var sources: [PublishSource] = []
        var owners: [String: String] = [:]
        // Every input is looked at before stopping: a folder of 40 files with 3 bad ones is one run.
        var problems: [PublishError] = []
        let folder = input.hasSuffix("/") ? String(input.dropLast()) : input
        for name in names {
            do {
                let source = try PublishSource.read(path: folder + "/" + name, override: overrides[name])
                if let other = owners[source.id] {
                    throw PublishError(source.path, "region id \"\(source.id)\" is also the id of \(other); set distinct ids in regions.json")
                }
                owners[source.id] = name
                sources.append(source)
            } catch let error as PublishError {
                problems.append(error)
            }
        }
        if problems.count == 1 { throw problems[0] }
        if !problems.isEmpty {
            let lines = problems.map { "  " + ($0.errorDescription ?? $0.reason) }.joined(separator: "\n")
            let kind = Set(problems.map(\.kind)).count == 1 ? problems[0].kind : .badData
            throw PublishError(folder, "\(problems.count) of its \(names.count) .mbtiles files cannot be published; nothing was written:\n" + lines, kind: kind)
        }
        return sources
    }

    /// How one input is handled.
    enum Decision {
        /// Published before from the very same file: its package is reused.
        case reuse(PublishedVersion)
        /// A new version: make its package (and deltas).
        case make(sourceSHA256: String)
    }

    private func decide(_ source: PublishSource, history: PublishHistory) throws -> Decision {
        let sha = try SHA256Hasher.hex(ofFileAt: source.path)
        let versions = history.regions[source.id] ?? []
        guard let record = versions.first(where: { $0.version == source.version }) else { return .make(sourceSHA256: sha) }
        guard record.sourceSHA256 == sha else {
            throw PublishError(
                source.path,
                "version \"\(source.version)\" of region \(source.id) was published before from another file; raise the version (metadata \"version\" or regions.json)")
        }
        // A package someone removed by hand is made again.
        guard FileManager.default.fileExists(atPath: packagesPath + "/" + record.package) else { return .make(sourceSHA256: sha) }
        return .reuse(record)
    }

    private func run(signingKey: MinisignSecretKey?, progress: (String, Int64, Int64) -> Void) throws -> PublishReport {
        try options.validate()
        let isDryRun = signingKey == nil
        let sources = try readSources()
        let previous = try PreviousCatalog.load(path: catalogPath)
        var history = try PublishHistory.load(path: historyPath)
        if let serial = options.serial, let old = previous?.serial, serial <= old {
            throw PublishError("--serial \(serial)", "must be above the current catalog's serial \(old) (clients refuse a lower one)", kind: .usage)
        }

        // What can be checked is checked before anything is written: every region that will be
        // made (its file and facts) and the styles, which name the regions and their formats.
        // A region kept as it was is not read again (its format is in the history).
        var decisions: [Decision] = []
        var sourceFormats: [String: TileFormat] = [:]
        for source in sources {
            let decision = try decide(source, history: history)
            switch decision {
            case .reuse(let kept): sourceFormats[source.id] = TileFormat(rawValue: kept.format)
            case .make: sourceFormats[source.id] = try RegionFacts.read(path: source.path, hashing: false).format
            }
            decisions.append(decision)
        }
        let publishedStyles = try PublishedStyle.readAll(input: options.inputDirectory, regions: sourceFormats)

        var notes: [String] = []
        var entries: [CatalogFile.Region] = []
        var regions: [PublishReport.Region] = []
        var removedFiles: [String] = []
        for (source, decision) in zip(sources, decisions) {
            let versions = history.regions[source.id] ?? []
            let record: PublishedVersion
            switch decision {
            case .reuse(let kept):
                record = kept
            case .make(let sha):
                if isDryRun {
                    record = try provisionalVersion(source, sourceSHA256: sha)
                } else {
                    try prepareFolders()
                    let made = try makeVersion(source, sourceSHA256: sha, bases: Array(versions.prefix(options.keep - 1))) {
                        progress(source.id, $0, $1)
                    }
                    record = made.version
                    notes += made.notes
                }
            }
            let entry = CatalogDocument.entry(for: source, record: record, baseURL: options.baseURL)
            entries.append(entry)
            let old = previous?.regions[source.id]
            let action: PublishReport.Action
            if old == nil {
                action = .added
            } else if old == entry {
                action = .unchanged
            } else {
                action = .updated
            }
            let oldVersion = old?.version
            if action != .unchanged, source.isVersionFromMetadata {
                notes.append(
                    "region \(source.id): version \"\(source.version)\" is the metadata \"version\" of \(source.fileName) (GDAL writes 1.1 and tippecanoe 2 there unless told otherwise); to choose it, give \"version\" for \"\(source.fileName)\" in regions.json or set the file's metadata")
            }
            regions.append(
                PublishReport.Region(
                    id: source.id, action: action, version: record.version,
                    previousVersion: oldVersion == record.version ? nil : oldVersion, package: "packages/" + record.package,
                    size: isDryRun && record.size == 0 ? nil : record.size, sha256: record.sha256.isEmpty ? nil : record.sha256,
                    installedSize: record.installedSize, deltaCount: record.deltas.count))
            if !isDryRun {
                let trimmed = trim([record] + versions.filter { $0.version != record.version })
                history.regions[source.id] = trimmed.kept
                removedFiles += trimmed.files
            }
        }
        let styles = try publishStyles(publishedStyles, previous: previous, isDryRun: isDryRun)
        for style in publishedStyles {
            for stack in RecommendedFonts.missingStacks(in: style.bundle.style) {
                notes.append(
                    "style \(style.id): labels in text-font [\(stack.joined(separator: ", "))] use no font of \(RecommendedFonts.packages) (what the mapgate package recommends): users' machines without those fonts draw them in a fallback (DejaVu Sans, Noto Sans); put \"DejaVu Sans Book\" or \"Noto Sans Regular\" in the stack to choose")
            }
        }
        let offered = Set(sources.map(\.id))
        for (id, entry) in (previous?.regions ?? [:]).sorted(by: { $0.key < $1.key }) where !offered.contains(id) {
            let version = entry.version
            regions.append(
                PublishReport.Region(
                    id: id, action: .removed, version: version, previousVersion: version, package: nil, size: nil, sha256: nil,
                    installedSize: nil, deltaCount: 0))
        }

        let regionsChanged = regions.contains { $0.action != .unchanged } || styles.reports.contains { $0.action != .unchanged }
        let publisherChanged = previous.map { $0.file.publisher != options.publisher } ?? true
        var catalogChanged = regionsChanged || publisherChanged || options.serial != nil
        if !catalogChanged, let signingKey, let previous {
            catalogChanged = !isSigned(previous.bytes, by: signingKey)
        } else if !catalogChanged, !FileManager.default.fileExists(atPath: signaturePath) {
            catalogChanged = true
        }
        let serial = catalogChanged ? (options.serial ?? (previous?.serial ?? 0) + 1) : previous?.serial
        guard catalogChanged, let signingKey, let serial else {
            return PublishReport(
                regions: regions, styles: styles.reports, catalogChanged: catalogChanged, serial: serial, isDryRun: isDryRun, removedFiles: [],
                notes: notes)
        }

        let now = Date(timeIntervalSince1970: clock.now.timeIntervalSince1970.rounded(.down))
        // A publisher's `gate` rules and a catalog-wide `minimumAppVersion` are not publish's to
        // manage: carried over from the previous catalog as they were.
        let document = CatalogFile(
            publisher: options.publisher, generated: ISODate.string(now),
            expires: ISODate.string(now.addingTimeInterval(Double(options.expiresDays) * 86_400)), serial: serial,
            minimumAppVersion: previous?.file.minimumAppVersion, gate: previous?.file.gate, regions: entries, styles: styles.entries)
        let bytes = try document.encoded()
        // What clients will do with it: refuse it if mapgate's own reader would.
        _ = try Catalog.parse(bytes, sourceURL: URL(fileURLWithPath: catalogPath).absoluteString)
        let signature = try signingKey.sign(
            message: bytes, trustedComment: "timestamp:\(Int64(now.timeIntervalSince1970))\tfile:catalog.json\tserial:\(serial)")
        try prepareFolders()
        try write(history.encoded(), to: historyPath)
        try write(bytes, to: catalogPath)
        try write(Data(signature.utf8), to: signaturePath)
        removedFiles += unusedStylePackages(keeping: styles.packages.union(previous?.stylePackages ?? []))
        for file in removedFiles {
            try? FileManager.default.removeItem(atPath: options.outputDirectory + "/" + file)
        }
        return PublishReport(
            regions: regions, styles: styles.reports, catalogChanged: true, serial: serial, isDryRun: false, removedFiles: removedFiles,
            notes: notes)
    }

    private func isSigned(_ bytes: Data, by key: MinisignSecretKey) -> Bool {
        guard let signature = FileManager.default.contents(atPath: signaturePath) else { return false }
        return (try? MinisignVerifier(trustedKeys: [key.publicKey]).verify(signatureFile: signature, message: bytes)) != nil
    }

    /// Keeps the newest ``PublishOptions/keep`` versions; returns them and the files (relative to
    /// the output folder) of the others, and of deltas from versions no longer kept.
    private func trim(_ versions: [PublishedVersion]) -> (kept: [PublishedVersion], files: [String]) {
        var kept = Array(versions.prefix(options.keep))
        var files: [String] = []
        for dropped in versions.dropFirst(options.keep) {
            files.append("packages/" + dropped.package)
            files += dropped.deltas.map { "packages/" + $0.package }
            if let base = dropped.base { files.append(".publish/bases/" + base) }
        }
        let keptVersions = Set(kept.map(\.version))
        for index in kept.indices {
            let (stay, go) = (kept[index].deltas.filter { keptVersions.contains($0.fromVersion) }, kept[index].deltas.filter { !keptVersions.contains($0.fromVersion) })
            files += go.map { "packages/" + $0.package }
            kept[index].deltas = stay
            // With keep 1 no delta will ever be made from this version: its base is not needed.
            if options.keep < 2, let base = kept[index].base {
                files.append(".publish/bases/" + base)
                kept[index].base = nil
            }
        }
        return (kept, files)
    }

    func prepareFolders() throws {
        for folder in [options.outputDirectory, packagesPath, statePath, basesPath, scratchPath] {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw PublishError(folder, "cannot create it: \(errorMessage(error))", kind: .io)
            }
        }
    }

    /// Writes `data` to a temporary file beside `path`, then renames it over `path`.
    func write(_ data: Data, to path: String) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw PublishError(path, "cannot write it: \(errorMessage(error))", kind: .io)
        }
    }
}
