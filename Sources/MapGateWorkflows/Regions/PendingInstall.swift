import FoundationEssentials
import Glibc
import MapGateBase
import MapGateTrust

/// The record of an install, written (durably) beside the regions before the rename that puts
/// the new file in place and removed once the record is saved (issue 40, item 4). A run killed
/// between the rename and the record leaves the new file under the old record: with this, a
/// reader takes the file for what it is (the new version, when its SHA-256 is the pending
/// record's, or when the record has none, its stamp or its content: ``Entry/names(_:)``) instead
/// of calling it damaged, and the next writer saves the record.
///
/// It also names the checked file and the use that paid for it (``Entry``): a run killed after
/// the use's delivery and before the rename leaves that file, which the next writer puts in place
/// when the gate's record says that use was delivered (``RegionLibrary/finishPendingInstalls(lock:finishing:)``).
public enum PendingInstall {
    /// What the file holds.
    struct Entry: Codable {
        var record: InstalledRegion
        /// The checked file the rename puts in place (in `partial/`).
        var file: String?
        /// The reservation of the use that pays for it (``GateAuthorization/reservationID``), if
        /// the run holds one.
        var paidBy: String?
        /// The checked file's stamp, taken before the rename (which keeps it): what tells that
        /// file, in `partial/` or in place, when the record has no SHA-256 (``InstalledRegion/sha256``).
        var stamp: RegionFileStamp?

        /// Whether the file at `path` is the checked file: its SHA-256 the record's, or, when that
        /// was not taken, its stamp the one taken before the rename, or else its pages, tiles and
        /// metadata the record's (a copy: found by an attack, a data directory copied with `cp -a`
        /// after a killed run had its paid update fetched and paid again).
        /// The content's verdict is kept for the file's stamp: the server asks every second, and
        /// each check reads the whole file (found by an attack: an idle server used a quarter of a
        /// core while a killed run's file stayed copied).
        func names(_ path: String) -> Bool {
            guard let sha256 = record.sha256 else {
                guard let now = RegionFileStamp(path: path), now.size == record.size else { return false }
                if now == stamp { return true }
                let key = "\(path)\n\(now.size) \(now.modified) \(now.inode)\n\(record.contentHash ?? "")\n\(record.metadataSHA256 ?? "")"
                if let known = PendingInstall.namedByContent.withLock({ $0[key] }) { return known }
                guard let checked = try? record.contentCheck(ofFileAt: path) else { return false }
                let named = checked == .intact(now)
                if named || checked != .changedWhileChecked { PendingInstall.namedByContent.withLock { $0[key] = named } }
                return named
            }
            return (try? SHA256Hasher.hex(ofFileAt: path)) == sha256
        }
    }

    /// ``Entry/names(_:)``'s verdicts by content, by path, stamp and record (this process's).
    fileprivate static let namedByContent = Locked<[String: Bool]>([:])

    /// `regions/.<id>.pending.json`: hidden, and not a `.mbtiles` file.
    static func path(of id: String, in directory: DataDirectory) -> String { directory.regionsPath + "/.\(id).pending.json" }

    /// The file: the entry as text, and its seal (``PendingInstallSeal``).
    private struct Sealed: Codable {
        var entry: String
        var seal: String
    }

    static func write(_ record: InstalledRegion, file: String, paidBy: String?, in directory: DataDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let entry = Entry(record: record, file: file, paidBy: paidBy, stamp: RegionFileStamp(path: file))
        let text = String(decoding: try encoder.encode(entry), as: UTF8.self)
        try AtomicFile.write(try encoder.encode(Sealed(entry: text, seal: try PendingInstallSeal.seal(text))), to: path(of: record.id, in: directory))
    }

    /// The pending entry of `id`, if any and sealed by this mapgate: one written or edited by hand
    /// (or by a mapgate from before seals, a kill across an upgrade) is not taken, and the file it
    /// names is what it is (a changed file, repaired by the next `sync`).
    static func entry(_ id: String, in directory: DataDirectory) -> Entry? {
        // Words that are no region id name no file (found by an attack: `tile ./../../victim`
        // opened `victim.pending.json` beside the data directory).
        guard Catalog.isValidRegionID(id), let data = FileManager.default.contents(atPath: path(of: id, in: directory)),
            let sealed = try? JSONDecoder().decode(Sealed.self, from: data), (try? PendingInstallSeal.seal(sealed.entry)) == sealed.seal,
            let entry = try? JSONDecoder().decode(Entry.self, from: Data(sealed.entry.utf8)), entry.record.id == id
        else { return nil }
        return entry
    }

    static func remove(_ id: String, in directory: DataDirectory) {
        unlink(path(of: id, in: directory))
    }

    /// The pending record of `id` when the installed file is the one it describes; nil when
    /// there is none, or the rename did not happen (the file is still the old one).
    static func completed(_ id: String, in directory: DataDirectory) -> InstalledRegion? {
        guard let entry = entry(id, in: directory), entry.names(directory.regionPath(id)) else { return nil }
        return entry.record
    }

    /// The ids with a pending record.
    static func ids(in directory: DataDirectory) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.regionsPath)) ?? []
        return names.compactMap { name in
            guard name.hasPrefix("."), name.hasSuffix(".pending.json") else { return nil }
            return String(name.dropFirst().dropLast(".pending.json".count))
        }
    }
}
