
/// The known word a mistyped one was meant to be (`synk` is `sync`, `--form` is `--from`): the
/// one nearest by edit distance (letters inserted, deleted, replaced or swapped), when it is near
/// enough to be a slip and no other is as near. Case is no slip: `CatalogURL` is `catalogURL`.
public enum Suggestion {
    public static func closest(to typed: String, among known: [String]) -> String? {
        let word = Array(FullWidth.ascii(typed).lowercased())
        // One slip in a short word, two in a longer one: `tile` is not `list`.
        let limit = word.count <= 4 ? 1 : 2
        let ranked = known.map { (name: $0, distance: distance(word, Array($0.lowercased()))) }.filter { $0.distance <= limit }
        guard let best = ranked.min(by: { $0.distance < $1.distance }) else { return nil }
        return ranked.filter { $0.distance == best.distance }.count == 1 ? best.name : nil
    }

    /// The optimal string alignment distance: Levenshtein's, with two neighbours swapped as one edit.
    public static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1) }
            }
        }
        return rows[a.count][b.count]
    }
}
