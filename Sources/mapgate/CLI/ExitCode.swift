import MapGate

/// The one mapping from errors to process exit codes, documented in docs/commands.md.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let badData: Int32 = 65
    static let unavailable: Int32 = 69
    static let io: Int32 = 74
    /// No answer at the prompt, the last use held by another run's question, or the data
    /// directory locked by another run: try again.
    static let tryAgain: Int32 = 75
    static let updateRequired: Int32 = 77

    static func forKind(_ kind: FailureKind) -> Int32 {
        switch kind {
        case .failure: failure
        case .usage: usage
        case .badData: badData
        case .unavailable: unavailable
        case .io: io
        case .noAnswer, .useHeld, .busy: tryAgain
        case .updateRequired: updateRequired
        }
    }

    static func forError(_ error: any Error) -> Int32 {
        if let failure = error as? any MapGateFailure {
            return forKind(failure.kind)
        }
        return failure
    }
}
