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
    /// The version gate is closed: the app must be updated (exit 77).
    case updateRequired
}

/// An error of the library that knows its ``FailureKind``.
public protocol MapGateFailure: Error {
    var kind: FailureKind { get }
}

/// The one mapping from errors to process exit codes, documented in docs/commands.md.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let badData: Int32 = 65
    public static let unavailable: Int32 = 69
    public static let io: Int32 = 74
    public static let updateRequired: Int32 = 77

    public static func forKind(_ kind: FailureKind) -> Int32 {
        switch kind {
        case .failure: failure
        case .usage: usage
        case .badData: badData
        case .unavailable: unavailable
        case .io: io
        case .updateRequired: updateRequired
        }
    }

    public static func forError(_ error: any Error) -> Int32 {
        if let failure = error as? any MapGateFailure {
            return forKind(failure.kind)
        }
        return failure
    }
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
