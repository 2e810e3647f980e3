import Foundation
import Testing
import TestSupport

/// The library's folders depend on each other one way only (docs/development.md, "Layout"): no
/// folder reaches itself through the folders it uses, however long the loop. Read from the
/// sources: each folder's top-level types, then which of them each other folder's code names.
@Suite struct FolderDependencyTests {
    static let root = TestPaths.repository + "/Sources/MapGate"

    /// Each folder's Swift files, as text without comments and string literals.
    static func folders() throws -> [String: [String]] {
        var folders: [String: [String]] = [:]
        for folder in try FileManager.default.contentsOfDirectory(atPath: root).sorted() {
            guard let walker = FileManager.default.enumerator(atPath: root + "/" + folder) else { continue }
            while let relative = walker.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: root + "/" + folder + "/" + relative, encoding: .utf8)
                folders[folder, default: []].append(text)
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

    /// Which folders each folder uses, with the type names that make each edge.
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
        let word = try Regex(#"\b[A-Z][A-Za-z0-9_]*\b"#)
        var uses: [String: [String: Set<String>]] = [:]
        for (folder, files) in folders {
            uses[folder, default: [:]] = uses[folder] ?? [:]
            for text in files {
                let stripped = Self.code(text)
                for match in stripped.matches(of: word) {
                    let name = String(stripped[match.range])
                    if let other = owner[name], other != folder { uses[folder, default: [:]][other, default: []].insert(name) }
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

    @Test func theFoldersHaveNoCycleOfAnyLength() throws {
        let uses = try Self.dependencies()
        #expect(uses.count > 10, "read \(uses.keys.sorted()) under \(Self.root)")
        let cycles = Self.cycles(in: uses.mapValues { Set($0.keys) })
        let described = cycles.map { component in
            component.flatMap { folder in
                (uses[folder] ?? [:]).filter { component.contains($0.key) }.map { other, names in
                    "\(folder) → \(other) (\(names.sorted().prefix(3).joined(separator: ", ")))"
                }
            }.sorted().joined(separator: "; ")
        }
        #expect(cycles.isEmpty, "\(described)")
    }

    /// The check itself: a loop through three folders is found, a chain is not.
    @Test func aLoopThroughThreeFoldersIsFound() {
        #expect(Self.cycles(in: ["Catalog": ["Config"], "Config": ["Server"], "Server": ["Catalog"], "Values": []]) == [["Catalog", "Config", "Server"]])
        #expect(Self.cycles(in: ["Catalog": ["Config"], "Config": ["Server"], "Server": ["Values"], "Values": []]).isEmpty)
        #expect(Self.cycles(in: ["A": ["B"], "B": ["A"], "C": ["D"], "D": ["C"]]).count == 2)
    }
}
