import Foundation
import Testing
import TestSupport

/// The library's layer targets say which target may use which (docs/decisions/library-targets.md):
/// a target imports only the ones below it, and SwiftPM refuses a cycle between targets. What they
/// cannot say is the order of the folders *inside* one target; this test checks that: no folder
/// reaches itself through the folders of its own target that it uses, however long the loop,
/// except the loops in ``allowedCycles``. Read from the sources: each folder's top-level types,
/// then which of them each other folder of the same target names.
@Suite struct FolderDependencyTests {
    static let sources = TestPaths.repository + "/Sources"
    /// The layer targets, bottom first (Package.swift).
    static let targets = ["MapGateBase", "MapGateStorage", "MapGateTrust", "MapGateWorkflows", "MapGateServer"]

    /// The loops the layout keeps on purpose, as `Target/Folder` sets: Values' AppVersion throws
    /// the library's failures with localized text (Support's `MapGateFailure`, `L`), and Support's
    /// Localization and AtomicFile use Values' `ISODate` and `PathText`. One target holds both
    /// (docs/development.md, "Layout"). A loop gone from the sources must go from here too.
    static let allowedCycles: Set<[String]> = [["MapGateBase/Support", "MapGateBase/Values"]]

    /// Each folder's Swift files, keyed `Target/Folder`.
    static func folders() throws -> [String: [String]] {
        var folders: [String: [String]] = [:]
        for target in targets {
            let root = sources + "/" + target
            for folder in try FileManager.default.contentsOfDirectory(atPath: root).sorted() {
                guard let walker = FileManager.default.enumerator(atPath: root + "/" + folder) else { continue }
                while let relative = walker.nextObject() as? String {
                    guard relative.hasSuffix(".swift") else { continue }
                    let text = try String(contentsOfFile: root + "/" + folder + "/" + relative, encoding: .utf8)
                    folders[target + "/" + folder, default: []].append(text)
                }
            }
        }
        return folders
    }

    static func code(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var kept = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            while let open = kept.firstIndex(of: "\""), let close = kept[kept.index(after: open)...].firstIndex(of: "\"") {
                kept.removeSubrange(open...close)
            }
            return kept
        }.joined(separator: "\n")
    }

    /// The capitalized names `code` uses. ASCII word boundaries (`.simple`), not Unicode's, which
    /// see `PathText.x` or `L.localized` as one word and so miss the use.
    static func names(in code: String) -> [String] {
        let word = /\b[A-Z][A-Za-z0-9_]*\b/.wordBoundaryKind(.simple)
        return code.matches(of: word).map { String(code[$0.range]) }
    }

    /// Which folders of its own target each folder uses, with the type names that make each edge.
    static func dependencies() throws -> [String: [String: Set<String>]] {
        let folders = try Self.folders()
        let declaration = try Regex(#"(?m)^(?:public |package |final |indirect )*(?:class|struct|enum|protocol|actor|typealias) ([A-Z][A-Za-z0-9_]*)"#)
        var owner: [String: String] = [:]
        for (folder, files) in folders {
            for text in files {
                for match in text.matches(of: declaration) {
                    if let name = match.output[1].substring { owner[String(name), default: folder] = folder }
                }
            }
        }
        func target(_ folder: String) -> Substring { folder.prefix { $0 != "/" } }
        var uses: [String: [String: Set<String>]] = [:]
        for (folder, files) in folders {
            uses[folder, default: [:]] = uses[folder] ?? [:]
            for text in files {
                for name in Self.names(in: Self.code(text)) {
                    if let other = owner[name], other != folder, target(other) == target(folder) {
                        uses[folder, default: [:]][other, default: []].insert(name)
                    }
                }
            }
        }
        return uses
    }

    /// The strongly connected components of more than one node (Tarjan's algorithm): each is a
    /// set of folders that all reach each other, i.e. a cycle of any length.
    static func cycles(in graph: [String: Set<String>]) -> [[String]] {
        var index: [String: Int] = [:]
        var lowLink: [String: Int] = [:]
        var stack: [String] = []
        var onStack = Set<String>()
        var components: [[String]] = []
        var next = 0
        func visit(_ node: String) {
            index[node] = next
            lowLink[node] = next
            next += 1
            stack.append(node)
            onStack.insert(node)
            for other in (graph[node] ?? []).sorted() {
                if index[other] == nil {
                    visit(other)
                    lowLink[node] = min(lowLink[node]!, lowLink[other]!)
                } else if onStack.contains(other) {
                    lowLink[node] = min(lowLink[node]!, index[other]!)
                }
            }
            guard lowLink[node] == index[node] else { return }
            var component: [String] = []
            while let top = stack.popLast() {
                onStack.remove(top)
                component.append(top)
                if top == node { break }
            }
            if component.count > 1 { components.append(component.sorted()) }
        }
        for node in graph.keys.sorted() where index[node] == nil { visit(node) }
        return components
    }

    @Test func theFoldersOfATargetHaveNoCycleOfAnyLength() throws {
        let uses = try Self.dependencies()
        #expect(uses.count > 10, "read \(uses.keys.sorted()) under \(Self.sources)")
        let found = Self.cycles(in: uses.mapValues { Set($0.keys) })
        let cycles = found.filter { !Self.allowedCycles.contains($0) }
        let described = cycles.map { component in
            component.flatMap { folder in
                (uses[folder] ?? [:]).filter { component.contains($0.key) }.map { other, names in
                    "\(folder) → \(other) (\(names.sorted().prefix(3).joined(separator: ", ")))"
                }
            }.sorted().joined(separator: "; ")
        }
        #expect(cycles.isEmpty, "\(described)")
        let gone = Self.allowedCycles.subtracting(found)
        #expect(gone.isEmpty, "no longer a loop, take it out of allowedCycles and docs/development.md: \(gone.sorted { $0.lexicographicallyPrecedes($1) })")
    }

    /// The check of a use: a name before a `.` member or a call is seen, one inside a longer
    /// name is not.
    @Test func aNameBeforeAMemberIsAUse() {
        #expect(Self.names(in: "let path = PathText.join(a, b); L.localized(x)") == ["PathText", "L"])
        #expect(Self.names(in: "let clock = MonotonicClockReading()") == ["MonotonicClockReading"])
    }

    /// The check itself: a loop through three folders is found, a chain is not.
    @Test func aLoopThroughThreeFoldersIsFound() {
        #expect(Self.cycles(in: ["Catalog": ["Config"], "Config": ["Server"], "Server": ["Catalog"], "Values": []]) == [["Catalog", "Config", "Server"]])
        #expect(Self.cycles(in: ["Catalog": ["Config"], "Config": ["Server"], "Server": ["Values"], "Values": []]).isEmpty)
        #expect(Self.cycles(in: ["A": ["B"], "B": ["A"], "C": ["D"], "D": ["C"]]).count == 2)
    }
}
