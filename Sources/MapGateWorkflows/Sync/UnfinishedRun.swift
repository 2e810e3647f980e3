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
/// for nothing. A region in it is taken out once installed, by this run or by the next.
enum UnfinishedRun {
    struct Entry: Codable, Equatable {
        /// The delivered use that paid for the regions.
        var paidBy: String
        /// The regions paid for and not installed, in the run's order.
        var regions: [String]
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

    /// The entry, if there is one sealed by this mapgate whose regions are region ids.
    static func entry(in directory: DataDirectory) -> Entry? {
        guard let data = FileManager.default.contents(atPath: path(in: directory)),
            let sealed = try? JSONDecoder().decode(Sealed.self, from: data), (try? seal(sealed.entry)) == sealed.seal,
            let entry = try? JSONDecoder().decode(Entry.self, from: Data(sealed.entry.utf8)), entry.regions.allSatisfy(Catalog.isValidRegionID)
        else { return nil }
        return entry
    }

    /// Writes `entry`, or removes the file when it names no region. Best effort: a run that
    /// cannot write it only pays again for what it did not install.
    static func save(_ entry: Entry, in directory: DataDirectory) {
        guard !entry.regions.isEmpty else { return remove(in: directory) }
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
