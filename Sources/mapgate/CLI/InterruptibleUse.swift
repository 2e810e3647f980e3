import FoundationEssentials
import MapGate

private typealias L = Localization

/// The gate use of a run that Ctrl-C (or SIGTERM) may end before it delivered anything: the
/// signal handler gives it back (``Gate/settle(_:)``, on a gate of its own) before the process
/// exits, as the end of an ordinary run would. A use already delivered stays counted.
final class InterruptibleUse: Sendable {
    private let authorization = Locked<GateAuthorization?>(nil)
    private let makeGate: @Sendable () throws -> Gate

    init(_ context: Context) {
        let stateFolder = context.stateFolder
        let directory = context.dataDirectory
        let settings = Result { try context.gateSettings() }
        makeGate = { try Gate(store: try GateStore(stateFolder: stateFolder, directory: directory), settings: try settings.get()) }
    }

    /// The use the run holds from now on.
    func hold(_ authorization: GateAuthorization) {
        self.authorization.withLock { $0 = authorization }
    }

    /// Gives the held use back unless it was delivered; says so when it cannot.
    func giveBack(console: Console) {
        guard let held = authorization.withLock({ $0 }), !held.isDelivered else { return }
        do {
            try makeGate().settle(held)
        } catch {
            console.warning(L.localized("the use this run reserved could not be given back (%1$s); it stays counted", "\(errorMessage(error))"))
        }
    }
}
