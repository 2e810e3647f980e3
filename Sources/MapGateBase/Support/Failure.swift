import FoundationEssentials

/// What kind of failure an error is, which decides the process exit code.
///
/// Every error the library throws conforms to ``MapGateFailure``; errors from elsewhere count as
/// ``FailureKind/failure``.
public enum FailureKind: Sendable, Equatable {
    /// Something went wrong that has no more specific kind (exit 1).
    case failure
    /// The command line or the configuration is wrong (exit 64).
    case usage
    /// A package, catalog or lookup answer is malformed (exit 65).
    case badData
    /// A network service could not be reached or answered with an error (exit 69).
    case unavailable
    /// Reading or writing a local file failed (exit 74).
    case io
    /// The update prompt got no answer: nothing ran, nothing was counted (exit 75: try again).
    case noAnswer
    /// The gate is closed only by the last use another run holds at its question: nothing ran,
    /// nothing was counted (exit 75: try again).
    case useHeld
    /// Another mapgate holds what this run must change (the data directory's or a publish
    /// folder's lock): nothing was done (exit 75: try again once it has finished).
    case busy
    /// The version gate is closed: the app must be updated (exit 77).
    case updateRequired
}

/// An error of the library that knows its ``FailureKind``.
public protocol MapGateFailure: Error {
    var kind: FailureKind { get }
}

/// A plain failure with a message, for the rare case no more specific error type fits.
public struct GeneralFailure: MapGateFailure, LocalizedError, Sendable {
    public let kind: FailureKind
    public let message: String
    public init(_ message: String, kind: FailureKind = .failure) {
        self.message = message
        self.kind = kind
    }
    public var errorDescription: String? { message }
}
