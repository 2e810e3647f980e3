import FoundationEssentials
import MapGate

private typealias L = Localization

/// The gate use of a run, given back when a signal ends the run before the use was delivered
/// (``SignalRouter``): Ctrl-C at the prompt, a closed terminal (SIGHUP) during a sync, SIGTERM
/// while a FIFO waits for its reader. The give-back is ``Gate/settle(_:)`` on a gate of its own,
/// as the end of an ordinary run would do; a use already delivered stays counted, and one being
/// delivered is waited for (``GateAuthorization/deliver(_:)``), so that "delivered" and "given
/// back" are one decision.
///
/// The reservation itself runs under the same lock (``reserving(_:)``): a signal that comes
/// while the use is being reserved is handled once the reservation is known.
final class InterruptibleUse: Sendable {
    private let authorization = Locked<GateAuthorization?>(nil)
    private let registration: SignalRouter.Registration

    init(_ context: Context) {
        let stateFolder = context.stateFolder
        let directory = context.dataDirectory
        let settings = Result { try context.gateSettings() }
        let console = context.console
        let held = authorization
        registration = SignalRouter.onSignal { _ in
            held.withLock { authorization in
                guard let authorization else { return }
                do {
                    let gate = try Gate(store: try GateStore(stateFolder: stateFolder, directory: directory), settings: try settings.get())
                    // Said (found by an attack: Ctrl-C at the question ended with no word, and the
                    // user could not tell whether a use had gone).
                    if try gate.settle(authorization) { console.noteAboutUse(Self.givenBack) }
                } catch {
                    // Not lost: the reservation names this process, and the next run gives back those of
                    // processes that have ended (found by an attack: "it stays counted" said otherwise).
                    console.warning(L.localized("the use this run reserved could not be given back now (%1$s); the next mapgate run gives it back", "\(errorMessage(error))"))
                }
            }
        }
    }

    /// What a run stopped by the user says when its use was given back.
    static var givenBack: String { L.localized("stopped: the use this run held was given back (nothing was counted)") }

    /// Whether the use this run held was delivered (kept for good).
    var isDelivered: Bool { authorization.withLock { $0?.isDelivered ?? false } }

    /// Whether the gate's record was told of the use's delivery: its step (a rename into place)
    /// is under way or done.
    var isTold: Bool { authorization.withLock { ($0?.isConfirmed ?? false) || ($0?.isDelivered ?? false) } }

    /// Whether the use this run held was given back (``Gate/settle(_:)``).
    var wasGivenBack: Bool { authorization.withLock { $0?.wasGivenBack ?? false } }

    /// Runs `reserve` (the gate's reservation of the use) and holds what it returns, with the
    /// signal handler's lock held throughout. For ``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``.
    func reserving(_ reserve: () throws -> GateAuthorization) throws -> GateAuthorization {
        try authorization.withLock { held in
            let authorization = try reserve()
            held = authorization
            return authorization
        }
    }
}
