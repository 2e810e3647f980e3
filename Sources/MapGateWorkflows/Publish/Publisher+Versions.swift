import FoundationEssentials
import Glibc
import MapGateBase
import MapGateStorage

extension Publisher {
    /// A new version as a dry run sees it: checked, but with no package made.
    func provisionalVersion(_ source: PublishSource, sourceSHA256: String) throws -> PublishedVersion {
        let facts = try RegionFacts.read(path: source.path, hashing: false)
        return PublishedVersion(
            version: source.version, sourceSHA256: sourceSHA256, contentHash: "", package: Self.packageName(source), size: 0, sha256: "",
            installedSize: source.installedSize, format: facts.format.rawValue, bounds: facts.bounds, minzoom: facts.minzoom,
            maxzoom: facts.maxzoom)
    }

    static func packageName(_ source: PublishSource) -> String { "\(source.id)-\(source.version).mbtiles.gz" }
    /// The name (under `packages/`, gzipped) of the delta to `source`'s version from `version`.
    static func deltaName(_ source: PublishSource, from version: String) -> String { "\(source.id)-\(version)-to-\(source.version).delta.mbtiles.gz" }
    /// The name of a version's base copy in `.publish/bases/`.
    static func baseName(_ source: PublishSource) -> String { "\(source.id)-\(source.version).mbtiles" }

    /// Makes a new version's package and its own base copy (deltas to later versions are made
    /// from it). The file is checked (on another thread) while it is compressed; a file that
    /// fails the checks leaves nothing behind.
    ///
    /// - Parameters:
    ///   - identity: the input's identity when its hash was taken: an input written to since is
    ///     refused (found by an attack: a file changed during a publish gave a signed catalog
    ///     whose package, hash and base copy disagreed, and every client refused it).
    ///   - previous: the catalog published before, for a version the history does not know
    ///     (`.publish/` lost; nil otherwise): it may not come back with other tiles, nor replace
    ///     its package with other bytes.
    func makePackage(
        _ source: PublishSource, sourceSHA256: String, identity: FileIdentity?, previous: PreviousCatalog?, progress: (Int64, Int64) -> Void
    ) throws -> PublishedVersion {
        let packageName = Self.packageName(source)
        let partial = scratchPath + "/" + packageName + ".part"
        let basePath = basesPath + "/" + Self.baseName(source)
        let copyBase = options.keep >= 2
        let path = source.path
        let isConverted = source.archivePath != nil
        let scratchBase = scratchPath + "/\(source.id)-\(source.version).mbtiles.part"
        let analysis = BackgroundJob<RegionFacts> {
            let facts = try RegionFacts.read(path: path, hashing: true)
            if copyBase {
                try? FileManager.default.removeItem(atPath: scratchBase)
                // A file converted from a PMTiles archive is this run's own and never written
                // again: a hard link is its base copy when both are on one file system.
                if isConverted, link(path, scratchBase) == 0 { return facts }
                do {
                    // The file's bytes, through a link too (found by an attack: an input that is a
                    // symbolic link got a link as its base copy, dangling or changing with the
                    // input, and the next versions no delta).
                    let input = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                    guard input >= 0 else { throw GeneralFailure(SystemErrorReason.text(errno), kind: .io) }
                    defer { close(input) }
                    try FileCopy.copy(descriptor: input, named: path, to: scratchBase)
                } catch {
                    throw PublishError(scratchBase, L.localized("cannot copy %1$s here: %2$s", "\(path)", "\(errorMessage(error))"), kind: .io)
                }
            }
            return facts
        }
        let packed: PackedFile
        let facts: RegionFacts
        do {
            packed = try PackageCompressor.pack(source.path, to: partial, progress: progress)
            facts = try analysis.wait()
        } catch {
            _ = try? analysis.wait()
            for leftover in [partial, scratchBase] { try? FileManager.default.removeItem(atPath: leftover) }
            throw error
        }
        do {
            let input = source.archivePath ?? source.path
            guard let identity, FileIdentity(path: input) == identity else {
                throw PublishError(input, L.localized("it changed while it was being published; nothing of it was published: publish again once it is written"))
            }
            try checkRepublished(source, contentHash: facts.contentHash, sha256: packed.sha256, previous: previous)
            try moveIntoPlace(partial, packagesPath + "/" + packageName)
        } catch {
            // Nothing of this version stays behind in the scratch folder.
            for leftover in [partial, scratchBase] { try? FileManager.default.removeItem(atPath: leftover) }
            throw error
        }
        var version = PublishedVersion(
            version: source.version, sourceSHA256: sourceSHA256, contentHash: facts.contentHash ?? "", package: packageName,
            size: packed.size, sha256: packed.sha256, installedSize: source.installedSize, format: facts.format.rawValue,
            bounds: facts.bounds, minzoom: facts.minzoom, maxzoom: facts.maxzoom)
        if copyBase {
            do {
                try moveIntoPlace(scratchBase, basePath)
            } catch {
                try? FileManager.default.removeItem(atPath: scratchBase)
                throw error
            }
            version.base = PathText.lastComponent(basePath)
        }
        return version
    }

    /// A version the previous catalog lists but the history does not know (`.publish/` was lost,
    /// found by an attack) is published again only as it was: the same tiles, and a package that
    /// is there already only if it has the same bytes. Another file under the same version would
    /// give clients that have it other tiles than clients that get it now, and a package replaced
    /// in place is one a cache keeps or a download in progress mixes.
    private func checkRepublished(_ source: PublishSource, contentHash: String?, sha256: String, previous: PreviousCatalog?) throws {
        guard let previous else { return }
        let subject = source.archivePath ?? source.path
        if let listed = previous.regions[source.id], listed.version == source.version, let listedHash = listed.contentHash, let contentHash,
            listedHash.lowercased() != contentHash.lowercased()
        {
            throw PublishError(
                subject,
                L.localized(
                    "version \"%1$s\" of region %2$s is in the published catalog with other tiles (contentHash %3$s…, this file's %4$s…) and %5$s does not know it; raise the version",
                    source.version, source.id, String(listedHash.prefix(12)), String(contentHash.prefix(12)), historyPath))
        }
        let existing = packagesPath + "/" + Self.packageName(source)
        if FileManager.default.fileExists(atPath: existing), let old = try? SHA256Hasher.hex(ofFileAt: existing), old != sha256 {
            throw PublishError(
                existing,
                L.localized("it is already there with other bytes, and %1$s does not know version \"%2$s\" of region %3$s; raise the version, or remove the file if nothing serves it", historyPath, source.version, source.id))
        }
    }

    /// Adds to each new version (one whose package this run made) its deltas from the kept
    /// earlier versions, newest first. A delta that cannot be made, does not check out or is not
    /// worth it is left out; the notes saying why, by region.
    func makeDeltas(_ versions: inout [PublishedVersion], inputs: Inputs, onEvent: (Event) -> Void) -> [String: [String]] {
        var notes: [String: [String]] = [:]
        for (index, (source, decision)) in zip(inputs.sources, inputs.decisions).enumerated() {
            guard case .make = decision else { continue }
            // Never from the version itself: a damaged package made again is that version already
            // in the history (found by an attack: a delta "from 2 to 2" was signed in).
            let bases = deltaBases(of: source, in: inputs.history)
            for base in bases {
                switch makeDelta(source, to: versions[index], from: base) {
                case .success(let delta?):
                    versions[index].deltas.append(delta)
                    onEvent(.deltaMade(region: source.id, fromVersion: delta.fromVersion, package: "packages/" + delta.package, size: delta.size))
                case .success(nil): continue
                case .failure(let note): notes[source.id, default: []].append(note.message)
                }
            }
        }
        return notes
    }

    /// The earlier versions a new version of `source` gets deltas from: the kept ones, newest
    /// first, never the version itself (a damaged package made again is that version already in
    /// the history: found by an attack, a delta "from 2 to 2" was signed in).
    func deltaBases(of source: PublishSource, in history: PublishHistory) -> ArraySlice<PublishedVersion> {
        (history.regions[source.id] ?? []).filter { $0.version != source.version }.prefix(options.keep - 1)
    }

    /// Under this package size (256 KiB), a delta left out for being over half the package is
    /// left out without a word.
    static let quietDeltaBelow: Int64 = 256 << 10

    /// Why a delta was left out.
    struct DeltaNote: Error {
        var message: String
    }

    /// Makes, checks and packs the delta from `base` to `target`. Nil when there is no base copy
    /// to make it from; a note when it failed, did not check out or is over half the package.
    private func makeDelta(_ source: PublishSource, to target: PublishedVersion, from base: PublishedVersion) -> Result<PublishedDelta?, DeltaNote> {
        guard let baseFile = base.base, FileManager.default.fileExists(atPath: basesPath + "/" + baseFile) else { return .success(nil) }
        let basePath = basesPath + "/" + baseFile
        let stem = String(Self.deltaName(source, from: base.version).dropLast(".gz".count))
        let raw = scratchPath + "/" + stem
        let check = scratchPath + "/" + stem + ".check"
        let partial = scratchPath + "/" + stem + ".gz.part"
        func clean() {
            for path in [raw, check, partial] {
                for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        }
        clean()
        defer { clean() }
        let what = L.localized("region %1$s: no delta from %2$s to %3$s", source.id, base.version, target.version)
        // Made to the new version's own base copy, taken with its package: the input may have
        // been written to since (found by an attack: a description edited while another region
        // was packed went into the signed delta, and the package kept the old one).
        let targetPath = target.base.map { basesPath + "/" + $0 } ?? source.path
        do {
            try MBTilesDelta.make(from: basePath, to: targetPath, output: raw)
            // Check it as a client would use it: applied to a copy of the base, it must give the new tiles.
            try FileManager.default.copyItem(atPath: basePath, toPath: check)
            try MBTilesDelta.apply(delta: raw, to: check)
            let result = try TilesetHash.compute(ofFileAt: check).hex
            guard result == target.contentHash else {
                return .failure(DeltaNote(message: L.localized("%1$s: applied to %2$s it gives tiles %3$s, not %4$s", "\(what)", "\(base.version)", "\(result)", "\(target.contentHash)")))
            }
            // And the new version's metadata: a delta has no NULL value (its NULL removes the
            // entry) and one row per name, so a file with either among its changes would be
            // another file after the delta than after the full package (found by an attack: an
            // attribution given twice, once NULL, was removed by the delta for good).
            if let difference = try MetadataRows(ofFileAt: check).firstDifference(from: MetadataRows(ofFileAt: targetPath)) {
                return .failure(DeltaNote(message: L.localized(
                    "%1$s: applied to %2$s it gives other metadata than the file's (%3$s); a delta cannot carry a NULL value or a name given twice: remove such rows to get deltas",
                    what, base.version, Self.describe(difference))))
            }
            // Clients unpack a delta to no more than the region's installed size (a bound against
            // gzip bombs): one larger (changed tiles of a deduplicated `map`/`images` file, each
            // stored on its own) would be downloaded by every client and refused (found by an attack).
            let unpacked = FileManager.default.sizeOfItem(atPath: raw)
            guard unpacked <= target.installedSize else {
                return .failure(
                    DeltaNote(
                        message: L.localized(
                            "%1$s: it unpacks to %2$s bytes, more than the region's %3$s, which clients refuse; left out", "\(what)", "\(unpacked)", "\(target.installedSize)")))
            }
            let packed = try PackageCompressor.pack(raw, to: partial)
            guard packed.size * 2 <= target.size else {
                // A small region's full package is small anyway: not worth a warning.
                if target.size < Self.quietDeltaBelow { return .success(nil) }
                return .failure(
                    DeltaNote(message: L.localized("%1$s: %2$s bytes is over half the full package (%3$s bytes), left out", "\(what)", "\(packed.size)", "\(target.size)")))
            }
            let name = stem + ".gz"
            try moveIntoPlace(partial, packagesPath + "/" + name)
            return .success(PublishedDelta(fromVersion: base.version, fromHash: base.contentHash, package: name, size: packed.size, sha256: packed.sha256))
        } catch var error as DeltaError {
            // What the publisher can change is said of the file it can change (found by an
            // attack: the advice named publish's own copy of an earlier version).
            if error.path == targetPath { error = DeltaError(path: source.archivePath ?? source.path, reason: error.reason) }
            let advice: String
            switch error.reason {
            case .textEncoding: advice = L.localized("publish a UTF-8 copy of it to get deltas (sqlite3 FILE .dump | sqlite3 COPY)")
            case .realCoordinates: advice = L.localized("store them as integers (a tiles table whose columns are INTEGER) to get deltas")
            default: return .failure(DeltaNote(message: "\(what): \(errorMessage(error))"))
            }
            guard error.path != basePath else {
                return .failure(
                    DeltaNote(
                        message: L.localized(
                            "%1$s: version %2$s was published from a file no delta can start from (%3$s); the versions published after it from other files get deltas",
                            what, base.version, error.reasonText)))
            }
            return .failure(DeltaNote(message: "\(what): \(errorMessage(error)); \(advice)"))
        } catch {
            return .failure(DeltaNote(message: "\(what): \(errorMessage(error))"))
        }
    }

    /// A metadata entry that differs, for a publisher: `"attribution" is "(c) OSM", NULL in the
    /// file, missing after the delta`.
    private static func describe(_ difference: (name: String?, expected: [String?], actual: [String?])) -> String {
        func values(_ list: [String?]) -> String {
            guard !list.isEmpty else { return L.localized("missing") }
            return list.map { $0.map { "\"" + TerminalText.inline(String($0.prefix(40))) + ($0.count > 40 ? "…" : "") + "\"" } ?? "NULL" }.joined(separator: ", ")
        }
        let name = difference.name.map { "\"" + TerminalText.inline($0) + "\"" } ?? "NULL"
        return L.localized("%1$s is %2$s in the file, %3$s after the delta", name, values(difference.expected), values(difference.actual))
    }

    /// Renames a finished file over its final name.
    /// Renames `from` over `to` and fsyncs the folder, so that after a power loss the host
    /// cannot come back with a catalog whose packages are missing.
    func moveIntoPlace(_ from: String, _ to: String) throws {
        if let reason = DurableFile.rename(from, over: to, folder: PathText.deletingLastComponent(to)) {
            try? FileManager.default.removeItem(atPath: from)
            throw PublishError(to, L.localized("cannot move %1$s here: %2$s", "\(from)", "\(reason)"), kind: .io)
        }
    }
}
