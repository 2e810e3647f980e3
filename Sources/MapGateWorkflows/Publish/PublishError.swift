import FoundationEssentials
import MapGateBase

/// Something `publish` cannot do, naming the file, region or setting concerned and the reason:
/// `input/kr-seoul.mbtiles: no version: set metadata "version" or give one in regions.json`.
public struct PublishError: MapGateFailure, LocalizedError, Sendable, Equatable {
    /// What the error is about: a file path, `regions.json`, `region <id>`, an option.
    public let subject: String
    public let reason: String
    public let kind: FailureKind

    public init(_ subject: String, _ reason: String, kind: FailureKind = .badData) {
        self.subject = subject
        self.reason = reason
        self.kind = kind
    }

    /// The subject is often a file name from outside: its line breaks are escaped (found by an
    /// attack: a file named with a line feed printed a forged `error:` line).
    public var errorDescription: String? { "\(TerminalText.inline(subject)): \(reason)" }
}
