import FoundationEssentials
import MapGateBase

/// Why a region or style is not in a mirror (``MirrorWriter``): said in English in `mirror.json`
/// (a file other machines read, whatever their language) and in `--json`, and in the user's
/// language on the terminal (issue 37).
public enum MirrorLeftOut: Sendable, Equatable {
    /// The catalog no longer offers it.
    case notOffered
    /// Another version is installed than the catalog offers.
    case otherVersion(id: String, installed: String, offered: String)
    /// Its package cannot be rebuilt byte for byte from the installed file.
    case notRebuildable
    /// Updated by a delta: the mirror carries the delta instead, for machines that have `fromVersion`.
    case carriesDelta(fromVersion: String)
    /// It could not be written (the reason, from the system).
    case notWritten(String)

    /// The words `mirror.json` and `--json` keep.
    public var english: String {
        // (not translated: the words mirror.json and --json keep, in English for every reader)
        switch self {
        case .notOffered: "the catalog no longer offers it"
        case .otherVersion(let id, let installed, let offered): "version \(installed) is installed and the catalog offers \(offered): 'mapgate sync \(id)' first"
        case .notRebuildable:
            // (not translated: mirror.json's words)
            "its package cannot be rebuilt byte for byte from the installed file (updated by a delta, or packed with other gzip settings than 'mapgate publish')"
        case .carriesDelta(let version):
            // (not translated: mirror.json's words)
            "its full package cannot be rebuilt (it was updated by a delta); the mirror carries that delta, for machines that have version \(version)"
        case .notWritten(let reason): reason
        }
    }

    /// What `mirror.json` keeps: the English words, but for a failure, whose reason (in the writer's
    /// language, with the writer's paths and the writer's remedy) is the writing machine's to read
    /// (found by an attack: another machine was told to 'mapgate remove' its region).
    public var manifestText: String {
        switch self {
        case .notWritten: "the machine that wrote this mirror could not write it (it said why when it wrote the mirror)"
        default: english
        }
    }

    /// The same in the user's language.
    public var localized: String {
        switch self {
        case .notOffered: L.localized("the catalog no longer offers it")
        case .otherVersion(let id, let installed, let offered):
            L.localized("version %1$s is installed and the catalog offers %2$s: run 'mapgate sync %3$s' first", installed, offered, id)
        case .notRebuildable:
            L.localized("its package cannot be rebuilt byte for byte from the installed file (updated by a delta, or packed with other gzip settings than 'mapgate publish')")
        case .carriesDelta(let version):
            L.localized("its full package cannot be rebuilt (it was updated by a delta); the mirror carries that delta, for machines that have version %1$s", version)
        case .notWritten(let reason): reason
        }
    }
}
