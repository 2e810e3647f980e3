import FoundationEssentials
import MapGateBase
import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// Writes a mirror (``MirrorLayout``) of what this machine has: the last catalog `sync`
/// accepted, exactly as it was signed, and the package of each installed region and style that
/// is the catalog's version, byte for byte what the catalog's SHA-256 names.
///
/// **Where the package bytes come from** (docs/decisions/0007-mirror-packages.md): rebuilt from
/// the installed file, the same deterministic gzip `publish` writes, and kept only when its
/// SHA-256 is the catalog's. Nothing is stored twice on the machine; a region whose package
/// cannot be rebuilt byte for byte (installed by a delta, or packed by another gzip) is left out
/// and the mirror says why.
///
/// **Atomic.** Each package is written under a temporary name, flushed, then renamed to its
/// hash; the manifest, the signature and the catalog come last, each renamed into place. A
/// mirror cut while it is written is the old mirror, or has no catalog (not a mirror), or a
/// catalog whose signature does not match (refused as a whole): never a half-checked one.
/// Packages the new catalog no longer names are removed at the end. The installed data is only
/// read.
public struct MirrorWriter {
    public enum Event {
        /// A package is being made (rebuilt or copied): a progress bar's label.
        case started(id: String, kind: Kind)
        /// Already in the mirror, checked, left as it is.
        case kept(MirrorManifest.Package, kind: Kind)
        case written(MirrorManifest.Package, kind: Kind)
        case leftOut(id: String, kind: Kind, reason: MirrorLeftOut)
    }

    public enum Kind: String, Sendable { case region, style }

    public struct Summary: Sendable {
        public var manifest: MirrorManifest
        public var bytes: Int64
        /// Packages that could not be written (a full stick, an I/O error), with the reason: the
        /// mirror lacks them, and the run must not say it is done (exit 74). Unlike a package
        /// left out by rule (not installed, not rebuildable), which the mirror is complete without.
        public var failures: [(id: String, reason: String)] = []
        public var isComplete: Bool { failures.isEmpty }
        /// When the mirror's catalog expires: every machine refuses the mirror after that.
        public var expires: Date?
    }

    /// How long before its catalog expires a mirror written is said to expire soon: a stick is
    /// carried for a day or two before it is read (found by an attack: one whose catalog expired
    /// within seconds was said done, and every machine then refused it).
    public static let expiringSoon: TimeInterval = 2 * 86_400

    /// What became of one package.
    enum Placement {
        case placed
        /// Left out by rule: `reason` says why (the mirror is complete without it).
        case leftOut(MirrorLeftOut)
        /// Could not be written.
        case failed(String)
    }

    let directory: DataDirectory
    let library: RegionLibrary
    let trustedKeys: [String]
    let requiresSignature: Bool
    let now: Date
    /// Makes the recorded stamp of a region found damaged one no file has
    /// (``RegionLibrary/distrustStamp(of:)`` on a writable state database: `library` may be read-only).
    let distrustStamp: (InstalledRegion) -> Void

    public init(
        directory: DataDirectory, library: RegionLibrary, trustedKeys: [String], requiresSignature: Bool, now: Date,
        distrustStamp: @escaping (InstalledRegion) -> Void = { _ in }
    ) {
        self.directory = directory
        self.library = library
        self.distrustStamp = distrustStamp
        self.trustedKeys = trustedKeys
        self.requiresSignature = requiresSignature
        self.now = now
    }

    /// Writes the mirror into the folder `destination` of this process (made if missing).
    /// - Parameter progress: bytes read of the installed file, and its size.
    public func write(
        to destination: String, progress: (String, Int64, Int64) -> Void = { _, _, _ in }, onEvent: (Event) -> Void
    ) throws -> Summary {
        // Compared as the folders they are, links followed (found by an attack: a link to the
        // data directory took the mirror into it).
        func resolved(_ path: String) -> String { URL(fileURLWithPath: PathText.standardized(path)).resolvingSymlinksInPath().path }
        let here = resolved(destination)
        let data = resolved(directory.path)
        if here == data || here.hasPrefix(data + "/") {
            throw GeneralFailure(L.localized("%1$s is inside the data directory %2$s: write the mirror somewhere else", "\(destination)", "\(directory.path)"), kind: .usage)
        }
        return try write(to: LocalMirrorFolder(path: destination), progress: progress, onEvent: onEvent)
    }

    /// Writes the mirror into `folder`.
    public func write(
        to folder: any MirrorFolder, progress: (String, Int64, Int64) -> Void = { _, _, _ in }, onEvent: (Event) -> Void
    ) throws -> Summary {
        guard let saved = SavedCatalog.load(from: directory) else {
            throw GeneralFailure(
                L.localized("no catalog to pass on in %1$s: 'mapgate sync' saves the catalog it accepts; run it once where the publisher is reachable", "\(directory.path)"),
                kind: .unavailable)
        }
        let catalog = try saved.verified(in: directory, trustedKeys: trustedKeys, requiresSignature: requiresSignature)
        // A mirror every machine would refuse is not written (found by an attack: both said done).
        if let expires = catalog.expires, now >= expires {
            throw GeneralFailure(
                L.localized(
                    "this machine's catalog expired on %1$s, and every machine would refuse a mirror of it: run 'mapgate sync' where the publisher is reachable, then write the mirror again",
                    LocalTime.text(expires)),
                kind: .badData)
        }
        // Before anything in the folder is touched (found by an attack: a refused run still
        // made its `packages/` and lock there, and removed the other mirror's partial files).
        try refuseUntrustedMirror(of: folder, saved: saved)
        try folder.prepare()
        defer { folder.finish() }
        try refuseRollback(of: folder, to: catalog, saved: saved)
        var failures: [(id: String, reason: String)] = []

        var manifest = MirrorManifest(
            written: ISODate.string(now), catalogSerial: catalog.serial, catalogSHA256: try SHA256Hasher.hex(of: saved.bytes),
            regions: [], styles: [], deltas: [], leftOut: [])
        var bytes: Int64 = 0
        let installed = try library.installed()
        for record in installed {
            guard let region = catalog.region(record.id) else {
                leave(record.id, .region, .notOffered, &manifest, onEvent)
                continue
            }
            guard region.version == record.version else {
                leave(record.id, .region, .otherVersion(id: record.id, installed: record.version, offered: region.version), &manifest, onEvent)
                continue
            }
            // A damaged installed file (truncated, emptied, replaced by a FIFO or a link to a
            // device) is a region the mirror lacks, said as such: not packed, not read for ever,
            // not passed off as one updated by a delta.
            if case .damaged(let reason)? = try? record.condition(ofFileAt: directory.regionPath(region.id), hashingUnstamped: false) {
                let failure = L.localized("the installed file is damaged (%1$s); 'mapgate sync %2$s' installs it again", reason, region.id)
                failures.append((region.id, failure))
                leave(region.id, .region, .notWritten(failure), &manifest, onEvent)
                continue
            }
            let package = MirrorManifest.Package(id: region.id, version: region.version, sha256: region.sha256, size: region.size)
            let updatedByDelta = record.deltaSHA256 != nil || !LeftoverFiles.keptDeltas(of: region.id, in: directory).isEmpty
            let placement = place(
                package, kind: .region, from: directory.regionPath(region.id), into: folder, checkingFirst: updatedByDelta,
                restoringWAL: record.packageWasWAL == true, progress: progress, onEvent)
            // A region updated by a delta whose rebuilt package did not fit (found by an attack: a
            // stick with room for the 1 KB delta failed for want of room for the full package,
            // which would not have been kept anyway): its delta is tried as for any such region.
            if case .failed = placement, updatedByDelta,
                case .carried(let delta) = carryDelta(of: region, record: record, into: folder, onEvent)
            {
                manifest.deltas.append(delta)
                bytes += delta.size
                leave(region.id, .region, .carriesDelta(fromVersion: delta.fromVersion), &manifest, onEvent)
                continue
            }
            // Not rebuilt byte for byte, and never updated by a delta: the installed file may be
            // damaged under an unchanged stamp (rotten on the disk; found by an attack: the run
            // blamed gzip settings and said done). Its own hash tells.
            if case .leftOut(.notRebuildable) = placement, !updatedByDelta,
                let installed = record.sha256, let hash = try? SHA256Hasher.hex(ofFileAt: directory.regionPath(region.id)), hash != installed
            {
                let reason = L.localized("its SHA-256 is %1$s…, %2$s… was installed", String(hash.prefix(12)), String(installed.prefix(12)))
                let failure = L.localized("the installed file is damaged (%1$s); 'mapgate sync %2$s' installs it again", reason, region.id)
                failures.append((region.id, failure))
                leave(region.id, .region, .notWritten(failure), &manifest, onEvent)
                // So that the advice works: the next `sync` hashes the file instead of trusting its stamp.
                distrustStamp(record)
                continue
            }
            if case .failed(let reason) = placement {
                failures.append((region.id, reason))
                leave(region.id, .region, .notWritten(reason), &manifest, onEvent)
            } else if case .leftOut(let reason) = placement {
                // Updated by a delta: the delta goes in the mirror, for machines that have its base.
                switch carryDelta(of: region, record: record, into: folder, onEvent) {
                case .carried(let delta):
                    manifest.deltas.append(delta)
                    bytes += delta.size
                    leave(region.id, .region, .carriesDelta(fromVersion: delta.fromVersion), &manifest, onEvent)
                case .failed(let failure):
                    // A delta that should be there and could not be written is a failure (exit
                    // 74), as a package is: not a quiet "left out" (issue 43).
                    failures.append((region.id, failure))
                    leave(region.id, .region, .notWritten(failure), &manifest, onEvent)
                case .none:
                    leave(region.id, .region, reason, &manifest, onEvent)
                }
            } else {
                manifest.regions.append(package)
                bytes += package.size
            }
        }
        for region in catalog.regions where !installed.contains(where: { $0.id == region.id }) {
            manifest.leftOut.append(MirrorManifest.LeftOut(id: region.id, reason: MirrorLeftOut.notInstalledThere.manifestText))
        }
        let styles = Dictionary(try InstalledStyles(directory: directory).all().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for style in catalog.styles {
            guard styles[style.id]?.bundle?.version == style.version else {
                // (not translated: a file other machines read)
                manifest.leftOut.append(MirrorManifest.LeftOut(id: "style " + style.id, reason: MirrorLeftOut.styleNotInstalledThere))
                continue
            }
            let package = MirrorManifest.Package(id: style.id, version: style.version, sha256: style.sha256, size: style.size)
            switch place(package, kind: .style, from: directory.stylePath(style.id), into: folder, progress: progress, onEvent) {
            case .failed(let reason):
                failures.append(("style " + style.id, reason))
                leave(style.id, .style, .notWritten(reason), &manifest, onEvent)
            case .leftOut(let reason):
                leave(style.id, .style, reason, &manifest, onEvent)
            case .placed:
                manifest.styles.append(package)
                bytes += package.size
            }
        }

        if let held = folder.read(name: MirrorLayout.manifestName).flatMap({ try? MirrorManifest.decode($0, source: folder.path) }) {
            let ownRegions = installed.filter { catalog.region($0.id)?.version == $0.version }.map(\.id)
            let own = Set(ownRegions + catalog.styles.filter { styles[$0.id]?.bundle?.version == $0.version }.map { "style " + $0.id })
            bytes += carryOver(held, of: catalog, into: folder, own: own, &manifest, onEvent)
        }
        try folder.write(try manifest.encoded(), name: MirrorLayout.manifestName)
        if let signature = saved.signature {
            try folder.write(signature, name: MirrorLayout.signatureName)
        } else {
            folder.remove(name: MirrorLayout.signatureName)
        }
        try folder.write(saved.bytes, name: MirrorLayout.catalogName)
        folder.removePackages(keeping: Set((manifest.regions + manifest.styles).map(\.sha256) + manifest.deltas.map(\.sha256)))
        return Summary(manifest: manifest, bytes: bytes, failures: failures, expires: catalog.expires)
    }

    /// Keeps what another machine put on this mirror that the catalog still names, byte for byte
    /// (each package checked against the catalog's SHA-256 and size, never the unsigned manifest's
    /// word): found by an attack, a second machine with fewer regions wrote a shared stick with
    /// the same catalog, said done, and took the other machine's regions off it. A package this
    /// machine failed to write itself is kept too when the mirror holds it whole (found by an
    /// attack: a machine whose own file was damaged removed another's good package). Returns the
    /// bytes kept.
    ///
    /// What the mirror held as the catalog's and is not whole (missing, cut short, changed) is
    /// said, unless it is this machine's own to write (`own`: what it has in the catalog's
    /// version), and kept in mirror.json as such while the mirror lacks it, not dropped under "not
    /// installed on the machine that wrote this mirror" (found by an attack: the run said only
    /// the new count; then, the run after, the reason went back to that).
    private func carryOver(
        _ held: MirrorManifest, of catalog: Catalog, into folder: any MirrorFolder, own: Set<String>, _ manifest: inout MirrorManifest,
        _ onEvent: (Event) -> Void
    ) -> Int64 {
        var bytes: Int64 = 0
        func carried(_ package: MirrorManifest.Package, _ kind: Kind) {
            let id = kind == .style ? "style " + package.id : package.id
            manifest.leftOut.removeAll { $0.id == id }
            bytes += package.size
            onEvent(.kept(package, kind: kind))
        }
        // Each package checked once, however many entries name it (found by an attack: 60,000
        // copies of one entry in a forged mirror.json hashed its package 60,000 times).
        var checked: [String: Bool] = [:]
        func whole(_ sha256: String, _ size: Int64) -> Bool {
            if let known = checked[sha256] { return known }
            let answer = folder.holds(sha256: sha256, size: size)
            checked[sha256] = answer
            return answer
        }
        var damagedRegions: [String] = []
        var damagedStyles: [String] = []
        var damagedDeltas: [(id: String, fromVersion: String)] = []
        for entry in held.regions where !manifest.regions.contains(where: { $0.id == entry.id }) {
            guard let region = catalog.region(entry.id), region.sha256 == entry.sha256 else { continue }
            guard whole(region.sha256, region.size) else {
                damagedRegions.append(entry.id)
                continue
            }
            let package = MirrorManifest.Package(id: region.id, version: region.version, sha256: region.sha256, size: region.size)
            manifest.regions.append(package)
            carried(package, .region)
        }
        for entry in held.styles where !manifest.styles.contains(where: { $0.id == entry.id }) {
            guard let style = catalog.styles.first(where: { $0.id == entry.id }), style.sha256 == entry.sha256 else { continue }
            guard whole(style.sha256, style.size) else {
                damagedStyles.append(entry.id)
                continue
            }
            let package = MirrorManifest.Package(id: style.id, version: style.version, sha256: style.sha256, size: style.size)
            manifest.styles.append(package)
            carried(package, .style)
        }
        let ownDeltas = Set(manifest.deltas.map(\.id))
        for entry in held.deltas where !manifest.deltas.contains(where: { $0.sha256 == entry.sha256 }) {
            guard let delta = catalog.region(entry.id)?.deltas.first(where: { $0.sha256 == entry.sha256 }) else { continue }
            guard whole(delta.sha256, delta.size) else {
                damagedDeltas.append((entry.id, delta.fromVersion))
                continue
            }
            manifest.deltas.append(MirrorManifest.Delta(id: entry.id, fromVersion: delta.fromVersion, sha256: delta.sha256, size: delta.size))
            bytes += delta.size
            // A region the mirror now carries as this delta alone says so, as the machine that wrote it did.
            if !manifest.regions.contains(where: { $0.id == entry.id }), !ownDeltas.contains(entry.id) {
                manifest.leftOut.removeAll { $0.id == entry.id }
                manifest.leftOut.append(MirrorManifest.LeftOut(id: entry.id, reason: MirrorLeftOut.carriesDelta(fromVersion: delta.fromVersion).english))
            }
        }
        // Said once each: a style, a region's full package, each of a region's deltas.
        for id in Set(damagedStyles).sorted() where !own.contains("style " + id) && !manifest.styles.contains(where: { $0.id == id }) {
            manifest.leftOut.removeAll { $0.id == "style " + id }
            leave(id, .style, .damagedOnMirror, &manifest, onEvent)
        }
        for id in Set(damagedRegions).sorted() where !own.contains(id) && !manifest.regions.contains(where: { $0.id == id }) {
            manifest.leftOut.removeAll { $0.id == id }
            leave(id, .region, .damagedOnMirror, &manifest, onEvent)
        }
        var saidDeltas: Set<String> = []
        for (id, fromVersion) in damagedDeltas where !own.contains(id) && saidDeltas.insert(id + " " + fromVersion).inserted {
            onEvent(.leftOut(id: id, kind: .region, reason: .deltaDamagedOnMirror(fromVersion: fromVersion)))
            // The region's reason in mirror.json, when the mirror now carries nothing of it.
            if !manifest.regions.contains(where: { $0.id == id }), !manifest.deltas.contains(where: { $0.id == id }), !damagedRegions.contains(id) {
                manifest.leftOut.removeAll { $0.id == id }
                manifest.leftOut.append(MirrorManifest.LeftOut(id: id, reason: MirrorLeftOut.damagedOnMirror.manifestText))
            }
        }
        // Found damaged by an earlier run, and still lacking: the reason stays (said then).
        for entry in held.leftOut where entry.reason == MirrorLeftOut.damagedOnMirror.manifestText && !own.contains(entry.id) {
            let isStyle = entry.id.hasPrefix("style ")
            let id = isStyle ? String(entry.id.dropFirst("style ".count)) : entry.id
            let offered = isStyle ? catalog.styles.contains { $0.id == id } : catalog.region(id) != nil
            let carriedNow = isStyle ? manifest.styles.contains { $0.id == id } : manifest.regions.contains { $0.id == id } || manifest.deltas.contains { $0.id == id }
            let generic = [MirrorLeftOut.notInstalledThere.manifestText, MirrorLeftOut.styleNotInstalledThere]
            guard offered, !carriedNow, let index = manifest.leftOut.firstIndex(where: { $0.id == entry.id }), generic.contains(manifest.leftOut[index].reason) else { continue }
            manifest.leftOut[index].reason = entry.reason
        }
        return bytes
    }

    /// Refuses to write over a mirror whose catalog is signed by a key this machine does not
    /// trust: another publisher's, or this publisher's before a key rotation this machine's
    /// policy has completed (found by an attack: a stick shared by two publishers' users lost the
    /// first publisher's maps to the second's `mirror`, without a word). A mirror signed by a
    /// trusted key, or by the key of the catalog this machine passes on, or whose signature does
    /// not even parse, is this machine's to write (a damaged one is repaired so). A machine that
    /// trusts no key (unsigned catalogs allowed) writes only over a mirror of its own catalog's
    /// key, or an unsigned one (found by an attack: it wrote over a signed one).
    private func refuseUntrustedMirror(of folder: any MirrorFolder, saved: SavedCatalog) throws {
        guard folder.read(name: MirrorLayout.catalogName) != nil, let existing = folder.read(name: MirrorLayout.signatureName),
            let signature = try? MinisignSignature(data: existing)
        else { return }
        var accepted = Set(trustedKeys.compactMap { try? MinisignPublicKey(text: $0).keyID })
        if let ours = saved.signature.flatMap({ try? MinisignSignature(data: $0) }) { accepted.insert(ours.keyID) }
        guard !accepted.contains(signature.keyID) else { return }
        throw GeneralFailure(
            L.localized(
                "%1$s holds a mirror whose catalog is signed by key %2$s, which this machine does not trust (another publisher's, or a key this machine trusts no more): write this machine's mirror to another folder, or remove that one first",
                folder.path, signature.keyID.hex),
            kind: .failure)
    }

    /// Refuses to put an older catalog over the newer one a mirror holds, signed by the same key
    /// (found by an attack: a machine that had not synced for a while wrote its catalog over a
    /// stick's newer one and deleted the newer packages; every machine that had the newer one then
    /// refused the stick as a rollback). The machine takes the stick's first (`sync --from`).
    /// A catalog of another trusted key is the newer when it was published later (serials are per
    /// key; found by an attack: while a publisher rotated keys, a machine's older catalog of the
    /// old key replaced a stick's newer one of the new key, which machines trusting only the new
    /// key then refused).
    private func refuseRollback(of folder: any MirrorFolder, to catalog: Catalog, saved: SavedCatalog) throws {
        guard let existing = folder.read(name: MirrorLayout.catalogName),
            let existingSignature = folder.read(name: MirrorLayout.signatureName), let signature = saved.signature,
            let keys = try? trustedKeys.map({ try MinisignPublicKey(text: $0) }), !keys.isEmpty
        else { return }
        let verifier = MinisignVerifier(trustedKeys: keys)
        guard let theirs = try? verifier.verify(signatureFile: existingSignature, message: existing),
            let ours = try? verifier.verify(signatureFile: signature, message: saved.bytes),
            let held = try? Catalog.parse(existing, sourceURL: URL(fileURLWithPath: folder.path + "/" + MirrorLayout.catalogName).absoluteString)
        else { return }
        if theirs.keyID != ours.keyID {
            guard let published = held.generated, let ourPublished = catalog.generated, published > ourPublished else { return }
            throw GeneralFailure(
                L.localized(
                    "the mirror at %1$s holds a catalog published later (%2$s, key %3$s) than this machine's (%4$s): take it first with 'mapgate sync --from %5$s', then write the mirror again",
                    folder.path, LocalTime.text(published), theirs.keyID.hex, LocalTime.text(ourPublished), ShellWord.quoted(folder.path)),
                kind: .failure)
        }
        guard let serial = catalog.serial, let heldSerial = held.serial, heldSerial > serial else { return }
        throw GeneralFailure(
            L.localized(
                "the mirror at %1$s holds a newer catalog (serial %2$s; this machine's is %3$s): take it first with 'mapgate sync --from %4$s', then write the mirror again",
                folder.path, "\(heldSerial)", "\(serial)", ShellWord.quoted(folder.path)),
            kind: .failure)
    }

    private func leave(_ id: String, _ kind: Kind, _ reason: MirrorLeftOut, _ manifest: inout MirrorManifest, _ onEvent: (Event) -> Void) {
        manifest.leftOut.append(MirrorManifest.LeftOut(id: kind == .style ? "style " + id : id, reason: reason.manifestText))
        onEvent(.leftOut(id: id, kind: kind, reason: reason))
    }

    /// Puts `package` at `packages/SHA256`, from the installed file `source`: kept when it is
    /// already there and checks out, else the installed file itself when its SHA-256 is the
    /// package's (a package that is not gzipped), else its deterministic gzip. Returns why it
    /// could not: by rule, or because it could not be written.
    ///
    /// - Parameter checkingFirst: the gzip's hash is taken before any byte is written (a region
    ///   updated by a delta, whose package is seldom rebuilt byte for byte): a package that would
    ///   not be kept is not written to a slow stick first (found by an attack).
    private func place(
        _ package: MirrorManifest.Package, kind: Kind, from source: String, into folder: any MirrorFolder, checkingFirst: Bool = false,
        restoringWAL: Bool = false, progress: (String, Int64, Int64) -> Void, _ onEvent: (Event) -> Void
    ) -> Placement {
        if folder.holds(sha256: package.sha256, size: package.size) {
            onEvent(.kept(package, kind: kind))
            return .placed
        }
        // An installed file replaced by a FIFO or a device (a link to /dev/zero) would be waited
        // on, or read for ever into the stick: refused without opening it, as a folder is.
        if let reason = FileManager.default.notRegularFileReason(atPath: source) { return .failed("\(source) \(reason)") }
        onEvent(.started(id: package.id, kind: kind))
        let temporary = folder.temporaryPackage(package.sha256)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        do {
            let made: PackedFile
            // (A package that was not gzipped is the installed file itself, but for the WAL bytes
            // `sync` switched, which are not put back in a copy: such a region is left out.)
            let plain = !restoringWAL && FileManager.default.sizeOfItem(atPath: source) == package.size
                && (try? SHA256Hasher.hex(ofFileAt: source)) == package.sha256
            if plain {
                try FileCopy.copy(from: source, to: temporary)
                made = PackedFile(size: package.size, sha256: package.sha256)
            } else {
                if checkingFirst {
                    let would = try PackageCompressor.digest(of: source, restoringWAL: restoringWAL) { done, total in progress(package.id, done, total) }
                    guard would == PackedFile(size: package.size, sha256: package.sha256) else { return .leftOut(.notRebuildable) }
                }
                made = try PackageCompressor.pack(source, to: temporary, restoringWAL: restoringWAL) { done, total in progress(package.id, done, total) }
            }
            guard made.sha256 == package.sha256, made.size == package.size else {
                return .leftOut(.notRebuildable)
            }
            if let reason = folder.commit(temporary, sha256: package.sha256) { return .failed(reason) }
        } catch {
            return .failed(errorMessage(error))
        }
        onEvent(.written(package, kind: kind))
        return .placed
    }

    /// What became of the delta a region updated by one would carry.
    private enum DeltaCarry {
        case carried(MirrorManifest.Delta)
        /// None kept that the catalog offers and that checks out: the region is left out by rule.
        case none
        /// One that should be carried could not be written there, with the reason.
        case failed(String)
    }

    /// Copies the delta kept for `region` (``LeftoverFiles/keptDeltas(of:in:)``) into the mirror
    /// when the catalog offers it and it checks out. The delta `record` says gave the file, offered
    /// and no longer kept (deleted, or `deltas/` unreadable), is a failure too.
    private func carryDelta(
        of region: CatalogRegion, record: InstalledRegion, into folder: any MirrorFolder, _ onEvent: (Event) -> Void
    ) -> DeltaCarry {
        var damaged: String?
        for kept in LeftoverFiles.keptDeltas(of: region.id, in: directory) {
            guard let offered = region.deltas.first(where: { $0.sha256 == kept.sha256 }) else { continue }
            let delta = MirrorManifest.Delta(id: region.id, fromVersion: offered.fromVersion, sha256: offered.sha256, size: offered.size)
            if folder.holds(sha256: offered.sha256, size: offered.size) { return .carried(delta) }
            var info = stat()
            guard lstat(kept.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) == offered.size,
                (try? SHA256Hasher.hex(ofFileAt: kept.path)) == offered.sha256
            else {
                // The delta this machine was updated by, offered by the catalog, no longer what it
                // was: the region cannot go on the stick, which is a failure, not a quiet "left
                // out" (found by an attack: `mirror -q && eject` ejected a stick without it).
                damaged = L.localized(
                    "the delta kept for it (%1$s) is damaged, so the mirror can carry neither it nor the full package; 'mapgate remove %2$s' then 'mapgate sync %2$s' installs the full package, which the mirror can carry",
                    kept.path, region.id)
                continue
            }
            let temporary = folder.temporaryPackage(offered.sha256)
            defer { try? FileManager.default.removeItem(atPath: temporary) }
            do {
                try FileCopy.copy(from: kept.path, to: temporary)
            } catch {
                return .failed(errorMessage(error))
            }
            if let reason = folder.commit(temporary, sha256: offered.sha256) { return .failed(reason) }
            return .carried(delta)
        }
        if let damaged { return .failed(damaged) }
        // Found by an attack: with the kept delta deleted, the region was left out "by rule" and
        // `mirror` said done (exit 0) without it. The record names the delta that gave the file.
        guard let sha256 = record.deltaSHA256 else { return .none }
        guard let offered = region.deltas.first(where: { $0.sha256.lowercased() == sha256.lowercased() }) else {
            // Not offered (any more): no machine would take it from the stick.
            return .failed(
                L.localized(
                    "it was updated by a delta the catalog no longer offers, so the mirror can carry neither it nor the full package; 'mapgate remove %1$s' then 'mapgate sync %1$s' installs the full package, which the mirror can carry",
                    region.id))
        }
        let delta = MirrorManifest.Delta(id: region.id, fromVersion: offered.fromVersion, sha256: offered.sha256, size: offered.size)
        // On the stick already (an earlier run put it there): carried.
        if folder.holds(sha256: offered.sha256, size: offered.size) { return .carried(delta) }
        var info = stat()
        let why =
            stat(directory.deltasPath, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR
            ? L.localized("%1$s is not a folder", directory.deltasPath)
            : L.localized("it is not in %1$s", directory.deltasPath)
        return .failed(
            L.localized(
                "the delta it was updated by (from version %1$s) is no longer kept (%2$s), so the mirror can carry neither it nor the full package; 'mapgate remove %3$s' then 'mapgate sync %3$s' installs the full package, which the mirror can carry",
                offered.fromVersion, why, region.id))
    }
}
