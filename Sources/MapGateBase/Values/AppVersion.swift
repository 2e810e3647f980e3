import FoundationEssentials

/// An app version such as `1.10`, `2.0.1` or `1.0-rc.1`, ordered the way people mean it.
///
/// Dotted numeric components compare as integers, missing components count as 0 (`1.1` = `1.1.0`,
/// `1.01` = `1.1`), and a pre-release suffix sorts below its release (`1.0b1` < `1.0`).
/// Pre-release labels that the order cannot tell apart are equal (`rc.07` = `rc7` = `RC-7`), so
/// that exactly one of `<`, `==`, `>` holds for any two versions.
public struct AppVersion: Sendable, Comparable, Hashable, CustomStringConvertible {
    /// The text as given, without surrounding whitespace.
    public let text: String
    /// Numeric components with trailing zeros removed, so equal versions compare equal.
    let components: [Int]
    /// The pre-release suffix (`b1`, `rc.1`), or nil for a release.
    let prerelease: String?
    /// The pre-release suffix as the order sees it (see ``PrereleasePiece``), or nil for a release.
    let prereleasePieces: [PrereleasePiece]?

    public init(_ string: String) throws {
        let trimmed = string.trimmingWhitespaceAndNewlines()
        guard let parsed = Self.parse(trimmed) else {
            throw AppVersionError(text: string)
        }
        text = trimmed
        components = parsed.components
        prerelease = parsed.prerelease
        prereleasePieces = parsed.prerelease.map(Self.pieces)
    }

    public var description: String { text }

    private static func parse(_ text: String) -> (components: [Int], prerelease: String?)? {
        var numbers: [Int] = []
        var index = text.startIndex
        while true {
            let digitsEnd = text[index...].firstIndex { !("0"..."9").contains($0) } ?? text.endIndex
            guard digitsEnd > index, let number = Int(text[index..<digitsEnd]) else { return nil }
            numbers.append(number)
            index = digitsEnd
            guard index < text.endIndex, text[index] == "." else { break }
            let next = text.index(after: index)
            guard next < text.endIndex, ("0"..."9").contains(text[next]) else { break }
            index = next
        }
        var suffix: String?
        if index < text.endIndex {
            var rest = text[index...]
            if let first = rest.first, "-+.".contains(first) { rest = rest.dropFirst() }
            let allowed = rest.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
            guard !rest.isEmpty, allowed, rest.first?.isLetter == true else { return nil }
            suffix = String(rest)
        }
        while numbers.count > 1, numbers.last == 0 { numbers.removeLast() }
        return (numbers, suffix)
    }

    public static func == (lhs: AppVersion, rhs: AppVersion) -> Bool {
        lhs.components == rhs.components && lhs.prereleasePieces == rhs.prereleasePieces
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(components)
        hasher.combine(prereleasePieces)
    }

    public static func < (lhs: AppVersion, rhs: AppVersion) -> Bool {
        let count = max(lhs.components.count, rhs.components.count)
        for position in 0..<count {
            let left = position < lhs.components.count ? lhs.components[position] : 0
            let right = position < rhs.components.count ? rhs.components[position] : 0
            if left != right { return left < right }
        }
        switch (lhs.prereleasePieces, rhs.prereleasePieces) {
        case (nil, nil), (nil, _?): return false
        case (_?, nil): return true
        case (let left?, let right?): return left.lexicographicallyPrecedes(right)
        }
    }

    /// One piece of a pre-release label, split at `.` and `-` and between digits and letters:
    /// numbers compare as integers and below words, words as lower-case text, so `rc.2` < `rc.10`
    /// and `b1` < `b2`. A run of digits too long for `Int` is a word.
    enum PrereleasePiece: Hashable, Comparable, Sendable {
        case number(Int)
        case word(String)

        static func < (lhs: Self, rhs: Self) -> Bool {
            switch (lhs, rhs) {
            case (.number(let x), .number(let y)): x < y
            case (.number, .word): true
            case (.word, .number): false
            case (.word(let x), .word(let y)): x < y
            }
        }
    }

    private static func pieces(_ label: String) -> [PrereleasePiece] {
        var result: [String] = []
        var current = ""
        var currentIsDigit: Bool?
        for character in label {
            if character == "." || character == "-" {
                if !current.isEmpty { result.append(current) }
                current = ""
                currentIsDigit = nil
                continue
            }
            let isDigit = character.isNumber
            if let currentIsDigit, currentIsDigit != isDigit {
                result.append(current)
                current = ""
            }
            current.append(character)
            currentIsDigit = isDigit
        }
        if !current.isEmpty { result.append(current) }
        return result.map { piece in Int(piece).map(PrereleasePiece.number) ?? .word(piece.lowercased()) }
    }
}

/// A string that is not a version. Never read as "no update".
public struct AppVersionError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let text: String
    public var kind: FailureKind { .badData }
    public var errorDescription: String? { L.localized("\"%1$s\" is not a version number", "\(text)") }
}
