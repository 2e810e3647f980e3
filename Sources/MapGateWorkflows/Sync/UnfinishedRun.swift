import FoundationEssentials
import Glibc
import MapGateBase
import MapGateTrust

/// The regions a `sync` run's use paid for that it has not installed yet (a download cut by the
/// network, a disk error, Ctrl-C, a kill): a later `sync` of only those regions installs them
/// without another use (found by an attack: `sync A B` on a failing network installed A, paid, and
/// `sync B` once the network was back paid again). `regions/.unfinished-run.json`, sealed as an
/// install's pending record is (``PendingInstallSeal``).
///
/// It names the use that paid (``Entry/paidBy``): it holds only while the gate's record lists that
/// use among its last delivered (``GateRecord/recentDeliveries``), and every `sync` that finds it
/// renews that use under a new name (``Gate/renewDelivery(_:)``), so a copy of an older file pays
/// for nothing. A region in it is taken out once installed, by this run or by the next; it is paid
/// for at the catalog's version of the run (found by an attack: a region listed while installed
/// was updated for nothing once a newer version came out).
enum UnfinishedRun {
    struct Entry: Codable, Equatable {
        /// The delivered use that paid for the regions (or the use of the run under way, which
        /// pays once it is delivered: ``previous`` holds until then).
        var paidBy: String
        /// The regions paid for and not installed, in the run's order.
        var regions: [Region]
        /// What an earlier run left, which this run's use takes over once delivered: what holds
        /// when that use never was (the run killed before its first install; found by an attack,
        /// the run's regions were charged again when it was killed after it).
        var previous: Earlier?
        /// The data directory it was written in (`device:inode` of its `regions/`): a copy in
        /// another is not believed (found by an attack: copied into a second `--data-dir` while
        /// the first ran on it, both runs were let in on the one use).
        var directory: String = ""

        /// Whether `region` (at the catalog's version) is paid for here.
        func covers(_ region: CatalogRegion) -> Bool {
            regions.contains { $0.id == region.id && $0.version == region.version }
        }
    }

    /// A region paid for, at the version the catalog offered.
    struct Region: Codable, Equatable {
        var id: String
        var version: String
    }

    /// An earlier run's entry, kept in ``Entry/previous``.
    struct Earlier: Codable, Equatable {
        var paidBy: String
        var regions: [Region]
    }

    /// `regions/.unfinished-run.json`: hidden, and not a `.mbtiles` file.
    static func path(in directory: DataDirectory) -> String { directory.regionsPath + "/.unfinished-run.json" }

    private struct Sealed: Codable {
        var entry: String
        var seal: String
    }

    /// The seal of `text`: the pending records' keyed hash, over text that says what it is (one
    /// sealed text is never taken for the other).
    private static func seal(_ text: String) throws -> String { try PendingInstallSeal.seal("unfinished-run " + text) }

    /// The identity of `directory`'s `regions/` folder, as ``Entry/directory`` holds it.
    private static func identity(of directory: DataDirectory) -> String? {
        FileIdentity(path: directory.regionsPath).map { "\($0.device):\($0.inode)" }
    }

    /// The entry, if there is one sealed by this mapgate, written in this data directory, whose
    /// regions are region ids.
    static func entry(in directory: DataDirectory) -> Entry? {
        guard let data = FileManager.default.contents(atPath: path(in: directory)),
            let sealed = try? JSONDecoder().decode(Sealed.self, from: data), (try? seal(sealed.entry)) == sealed.seal,
            let entry = try? JSONDecoder().decode(Entry.self, from: Data(sealed.entry.utf8)), entry.directory == identity(of: directory),
            (entry.regions + (entry.previous?.regions ?? [])).allSatisfy({ Catalog.isValidRegionID($0.id) })
        else { return nil }
        return entry
    }

    /// The entry that holds, of `entry` and its ``Entry/previous``, given the gate's last
    /// delivered uses (`paid`): the run's own once its use was delivered, else the earlier one.
    /// With the previous entry's use to retire when the run's own holds (nothing names it after).
    static func holding(_ entry: Entry?, paid: [String]) -> (entry: Entry?, superseded: String?) {
        guard let entry else { return (nil, nil) }
        if paid.contains(entry.paidBy) {
            let superseded = entry.previous.map(\.paidBy).flatMap { paid.contains($0) ? $0 : nil }
            return (Entry(paidBy: entry.paidBy, regions: entry.regions, directory: entry.directory), superseded)
        }
        guard let previous = entry.previous, paid.contains(previous.paidBy) else { return (nil, nil) }
        return (Entry(paidBy: previous.paidBy, regions: previous.regions, directory: entry.directory), nil)
    }

    /// Writes `entry`, or removes the file when it names no region. Best effort: a run that
    /// cannot write it only pays again for what it did not install.
    static func save(_ entry: Entry, in directory: DataDirectory) {
        guard !entry.regions.isEmpty || !(entry.previous?.regions.isEmpty ?? true), let identity = identity(of: directory) else { return remove(in: directory) }
        var entry = entry
        entry.directory = identity
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let text = try? encoder.encode(entry), case let string = String(decoding: text, as: UTF8.self),
            let sealed = try? encoder.encode(Sealed(entry: string, seal: try seal(string)))
        else { return }
        try? AtomicFile.write(sealed, to: path(in: directory))
    }

    static func remove(in directory: DataDirectory) {
        unlink(path(in: directory))
    }
}
