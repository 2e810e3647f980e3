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
    /// Not installed on the machine that wrote the mirror (in mirror.json only: said of every
    /// region of the catalog that machine lacks).
    case notInstalledThere
    /// Another machine put it on the mirror, and its package there is missing or damaged; this
    /// machine does not have it to write again (found by an attack: it was dropped, and the run
    /// said only the new count).
    case damagedOnMirror

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
        }
    }

    /// The reason `mirror.json` gives, as the machine that reads the mirror says it: in the
    /// user's language when it is one of mapgate's own (found by an attack: a Japanese user was
    /// told "not in the mirror" with the writing machine's English), from the writer's side (its
    /// advice was for the writer: "run 'mapgate sync geo' first"). Nil for words mapgate does not
    /// write, which are shown as the mirror's, as they are.
    public static func readerText(ofManifestText text: String) -> String? {
        let fixed: [MirrorLeftOut] = [.notOffered, .notRebuildable, .notInstalledThere]
        if let known = fixed.first(where: { $0.english == text }) { return known.localized }
        if text == MirrorLeftOut.damagedOnMirror.english {
            return L.localized(
                "its package on this mirror was missing or damaged, and the machine that wrote the mirror last does not have it: 'mapgate mirror' on a machine that has it writes it again")
        }
        if text == MirrorLeftOut.notWritten("").manifestText {
            return L.localized("the machine that wrote this mirror could not write it (it said why when it wrote the mirror)")
        }
        if let versions = text.between("version ", and: " is installed and the catalog offers "), let rest = text.after(" is installed and the catalog offers "),
            let offered = rest.before(": 'mapgate sync ")
        {
            return L.localized("the machine that wrote this mirror has version %1$s, not the catalog's %2$s", shown(versions), shown(offered))
        }
        let delta = MirrorLeftOut.carriesDelta(fromVersion: "\u{0}").english.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        if delta.count == 2, text.hasPrefix(delta[0]), text.hasSuffix(delta[1]), text.count > delta[0].count + delta[1].count {
            return MirrorLeftOut.carriesDelta(fromVersion: shown(String(text.dropFirst(delta[0].count).dropLast(delta[1].count)))).localized
        }
        return nil
    }

    /// A version read from the mirror's file: text from outside, one line, short.
    private static func shown(_ version: String) -> String {
        TerminalText.capped(TerminalText.inline(version), codePoints: 64)
    }
}

extension String {
    fileprivate func after(_ marker: String) -> String? {
        firstRange(of: marker).map { String(self[$0.upperBound...]) }
    }

    fileprivate func before(_ marker: String) -> String? {
        firstRange(of: marker).map { String(self[..<$0.lowerBound]) }
    }

    fileprivate func between(_ start: String, and end: String) -> String? {
        guard hasPrefix(start) else { return nil }
        return String(dropFirst(start.count)).before(end)
    }
}
