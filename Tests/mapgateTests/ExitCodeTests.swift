import MapGate
@testable import mapgate
import Testing

/// The one mapping from a failure's kind to the process exit code (docs/commands.md).
@Suite struct ExitCodeTests {
    struct Plain: Error {}

    @Test(arguments: [
        (FailureKind.failure, Int32(1)), (.usage, 64), (.badData, 65), (.unavailable, 69), (.io, 74), (.noAnswer, 75), (.useHeld, 75), (.busy, 75),
        (.updateRequired, 77),
    ])
    func eachKindHasItsCode(kind: FailureKind, code: Int32) {
        #expect(ExitCode.forKind(kind) == code)
        #expect(ExitCode.forError(GeneralFailure("x", kind: kind)) == code)
    }

    @Test func anErrorFromElsewhereIsAFailure() {
        #expect(ExitCode.forError(Plain()) == 1)
    }
}
