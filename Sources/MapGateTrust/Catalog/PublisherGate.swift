import FoundationEssentials
import MapGateBase

/// The publisher's rules for the gate, inside the signed catalog: they replace the profile's and
/// the managed policy's, and are saved with the gate's state so they hold offline.
public struct PublisherGate: Sendable, Equatable, Codable {
    /// An installed app below this version is closed at once: no grace, no uses.
    public var minimumAppVersion: String?
    public var graceDays: Int?
    public var maxPrompts: Int?
    public var closeAfterDays: Int?

    public init(minimumAppVersion: String? = nil, graceDays: Int? = nil, maxPrompts: Int? = nil, closeAfterDays: Int? = nil) {
        self.minimumAppVersion = minimumAppVersion
        self.graceDays = graceDays
        self.maxPrompts = maxPrompts
        self.closeAfterDays = closeAfterDays
    }

    /// Each rule at the stricter of `self`'s and `other`'s (a rule one of them lacks is the other's):
    /// the fewest days and prompts, the highest minimum version.
    public func stricter(with other: PublisherGate) -> PublisherGate {
        func least(_ a: Int?, _ b: Int?) -> Int? { a.map { a in b.map { min(a, $0) } ?? a } ?? b }
        var minimum = minimumAppVersion ?? other.minimumAppVersion
        if let mine = minimumAppVersion.flatMap({ try? AppVersion($0) }), let theirs = other.minimumAppVersion.flatMap({ try? AppVersion($0) }) {
            minimum = mine < theirs ? other.minimumAppVersion : minimumAppVersion
        }
        return PublisherGate(
            minimumAppVersion: minimum, graceDays: least(graceDays, other.graceDays), maxPrompts: least(maxPrompts, other.maxPrompts),
            closeAfterDays: least(closeAfterDays, other.closeAfterDays))
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case minimumAppVersion, graceDays, maxPrompts, closeAfterDays
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Strict: an unknown key (a typo would silently drop a rule), a number out of range or a
    /// version that is not one is an error, said at `gate`.
    public init(from decoder: any Decoder) throws {
        func fail(_ reason: String) -> DecodingError {
            .dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: reason))
        }
        let known = Set(CodingKeys.allCases.map(\.stringValue))
        let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        if let unknown = keys.sorted().first(where: { !known.contains($0) }) { throw fail(L.localized("unknown key \"%1$s\"", "\(unknown)")) }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func integer(_ key: CodingKeys, _ range: ClosedRange<Int>) throws -> Int? {
            let said = "\(key.stringValue) must be an integer \(range.lowerBound)…\(range.upperBound)"
            guard let value = try? container.decodeIfPresent(Int.self, forKey: key) else {
                if container.contains(key) { throw fail(said) }
                return nil
            }
            guard range.contains(value) else { throw fail(said) }
            return value
        }
        graceDays = try integer(.graceDays, 0...365)
        maxPrompts = try integer(.maxPrompts, 0...100)
        closeAfterDays = try integer(.closeAfterDays, 0...3650)
        if container.contains(.minimumAppVersion) {
            guard let text = try? container.decode(String.self, forKey: .minimumAppVersion), (try? AppVersion(text)) != nil else {
                throw fail(L.localized("minimumAppVersion is not a version"))
            }
            minimumAppVersion = text
        }
    }
}
