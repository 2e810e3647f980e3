import Foundation
import Testing
import TestSupport

/// The library's folders depend on each other one way only (docs/development.md, "Layout"): a
/// folder that uses another's types is never used by it. Read from the sources: each folder's
/// top-level types, then which of them each other folder's code names.
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

    @Test func noTwoFoldersDependOnEachOther() throws {
        let folders = try Self.folders()
        #expect(folders.count > 10, "read \(folders.keys.sorted()) under \(Self.root)")
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
            for text in files {
                let stripped = Self.code(text)
                for match in stripped.matches(of: word) {
                    let name = String(stripped[match.range])
                    if let other = owner[name], other != folder { uses[folder, default: [:]][other, default: []].insert(name) }
                }
            }
        }
        var cycles: [String] = []
        for (folder, used) in uses {
            for (other, names) in used where folder < other {
                if let back = uses[other]?[folder] {
                    cycles.append("\(folder) → \(other) (\(names.sorted().prefix(3).joined(separator: ", "))) and back (\(back.sorted().prefix(3).joined(separator: ", ")))")
                }
            }
        }
        #expect(cycles.isEmpty, "\(cycles.sorted())")
    }
}
