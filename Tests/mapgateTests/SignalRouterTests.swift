import Dispatch
import Foundation
@testable import mapgate
import Testing

/// The router's registrations of cleanups (``SignalRouter/onSignal(_:)``).
@Suite struct SignalRouterTests {
    /// Holds a registration of its own, as a run's use does (``InterruptibleUse``).
    final class Holder: Sendable {
        let registration = SignalRouter.onSignal { _ in }
    }

    /// Found by the package's walkthrough (a release build): a `sync`'s cleanup held the run's use,
    /// whose own registration, let go of when the cleanup was, waited for ever on the lock the
    /// cleanup's registration was removed under. A cleanup is let go of after the lock.
    @Test func aCleanupLetGoOfThatUnregistersAnotherDoesNotWaitForEver() {
        final class Box: @unchecked Sendable { var registration: SignalRouter.Registration? }
        let box = Box()
        do {
            let holder = Holder()
            box.registration = SignalRouter.onSignal { _ in withExtendedLifetime(holder) {} }
        }  // the cleanup alone holds the holder now
        let done = DispatchSemaphore(value: 0)
        let dropping = Thread {
            box.registration = nil
            done.signal()
        }
        dropping.start()
        #expect(done.wait(timeout: .now() + 5) == .success, "dropping the registration waited for ever")
    }
}
