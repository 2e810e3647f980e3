import FoundationEssentials
import MapGateBase
import MapGateTrust

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
    /// Not installed on the machine that wrote the mirror (in mirror.json only: said of every
    /// region of the catalog that machine lacks).
    case notInstalledThere
    /// Another machine put it on the mirror, and its package there is missing or damaged; this
    /// machine does not have it to write again (found by an attack: it was dropped, and the run
    /// said only the new count).
    case damagedOnMirror
    /// The same of one of its deltas (said on the terminal; mirror.json keeps one reason a region).
    case deltaDamagedOnMirror(fromVersion: String)

    /// mirror.json's reason for a style the writing machine lacks in the catalog's version.
    static let styleNotInstalledThere = "not installed in this version"

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
        case .notInstalledThere: "not installed on the machine that wrote this mirror"
        case .damagedOnMirror:
            // (not translated: mirror.json's words)
            "its package on this mirror was missing or damaged, and the machine that wrote the mirror last does not have it: 'mapgate mirror' on a machine that has it writes it again"
        case .deltaDamagedOnMirror(let version):
            // (not translated: --json's words)
            "its delta from version \(version) on this mirror was missing or damaged, and this machine does not have it to write again"
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
        case .notInstalledThere: L.localized("not installed on the machine that wrote this mirror")
        case .damagedOnMirror:
            L.localized("its package on this mirror was missing or damaged, and this machine does not have it to write again: run 'mapgate mirror' on a machine that has it")
        case .deltaDamagedOnMirror(let version):
            L.localized(
                "its delta from version %1$s on this mirror was missing or damaged, and this machine does not have it to write again: run 'mapgate mirror' on a machine that has it",
                version)
        }
    }

    /// The reason `mirror.json` gives for `region`, as the machine that reads the mirror says it:
    /// in the user's language when it is one of mapgate's own (found by an attack: a Japanese user
    /// was told "not in the mirror" with the writing machine's English), from the writer's side
    /// (its advice was for the writer: "run 'mapgate sync geo' first"). Only words mapgate writes
    /// for that region of this catalog are taken (a version another machine has must be a plain
    /// version; the catalog's version and deltas must be the ones named: found by the attack on
    /// this, a forged "the catalog offers 999" was said as mapgate's own); nil otherwise, and
    /// the words are shown as the mirror's, as they are.
    public static func readerText(ofManifestText text: String, region: CatalogRegion) -> String? {
        let fixed: [MirrorLeftOut] = [.notOffered, .notRebuildable, .notInstalledThere]
        if let known = fixed.first(where: { $0.english == text }) { return known.localized }
        if text == MirrorLeftOut.damagedOnMirror.english {
            return L.localized(
                "its package on this mirror was missing or damaged, and the machine that wrote the mirror last does not have it: 'mapgate mirror' on a machine that has it writes it again")
        }
        if text == MirrorLeftOut.notWritten("").manifestText {
            return L.localized("the machine that wrote this mirror could not write it (it said why when it wrote the mirror)")
        }
        let prefix = "version ", middle = " is installed and the catalog offers "
        if text.hasPrefix(prefix), let end = text.firstRange(of: middle) {
            let installed = String(text[text.index(text.startIndex, offsetBy: prefix.count)..<end.lowerBound])
            if isPlainVersion(installed), text == MirrorLeftOut.otherVersion(id: region.id, installed: installed, offered: region.version).english {
                return L.localized("the machine that wrote this mirror has version %1$s, not the catalog's %2$s", installed, region.version)
            }
        }
        if let delta = region.deltas.first(where: { MirrorLeftOut.carriesDelta(fromVersion: $0.fromVersion).english == text }) {
            return MirrorLeftOut.carriesDelta(fromVersion: delta.fromVersion).localized
        }
        return nil
    }

    /// Whether `version` is one a catalog would give (letters, digits, `.`, `_`, `+`, `-`; at most 64).
    private static func isPlainVersion(_ version: String) -> Bool {
        guard let first = version.unicodeScalars.first, version.unicodeScalars.count <= 64 else { return false }
        func plain(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) }
        return plain(first) && version.unicodeScalars.allSatisfy { plain($0) || "._+-".unicodeScalars.contains($0) }
    }
}

