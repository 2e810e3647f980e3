import FoundationEssentials
import Glibc
import MapGateBase

/// The record of an install, written (durably) beside the regions before the rename that puts
/// the new file in place and removed once the record is saved (issue 40, item 4). A run killed
/// between the rename and the record leaves the new file under the old record: with this, a
/// reader takes the file for what it is (the new version, when its SHA-256 is the pending
/// record's) instead of calling it damaged, and the next writer saves the record.
public enum PendingInstall {
    /// `regions/.<id>.pending.json`: hidden, and not a `.mbtiles` file.
    static func path(of id: String, in directory: DataDirectory) -> String { directory.regionsPath + "/.\(id).pending.json" }

    static func write(_ record: InstalledRegion, in directory: DataDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try AtomicFile.write(try encoder.encode(record), to: path(of: record.id, in: directory))
    }

    static func remove(_ id: String, in directory: DataDirectory) {
        unlink(path(of: id, in: directory))
    }

    /// The pending record of `id` when the installed file is the one it describes; nil when
    /// there is none, or the rename did not happen (the file is still the old one).
    static func completed(_ id: String, in directory: DataDirectory) -> InstalledRegion? {
        guard let data = FileManager.default.contents(atPath: path(of: id, in: directory)),
            let record = try? JSONDecoder().decode(InstalledRegion.self, from: data), record.id == id,
            (try? SHA256Hasher.hex(ofFileAt: directory.regionPath(id))) == record.sha256
        else { return nil }
        return record
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
