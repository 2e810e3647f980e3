import FoundationEssentials
import MapGate

#if canImport(Glibc)
import Glibc
#endif

private typealias L = Localization

/// `serve` and `open` as the system service runs them for a user (issue 36): a session of the
/// machine's one tile server instead of a server of their own. The use is asked for at the
/// user's terminal and reserved as ever; the machine's server delivers it at the next tile it
/// answers, and the run ends on Ctrl-C (or when the server ends the session) like a server's.
enum MachineSessionLaunch {
    /// The session's socket when this run is one (the service gave it one, and this process is
    /// the service's user on a machine in system mode), else nil: the command serves itself.
    static func socket(_ context: Context) throws -> LocalSocket? {
        guard let text = context.environment[MachineSession.descriptorVariable], let descriptor = Int32(text), descriptor >= 3 else { return nil }
        guard try context.isSystemService() else { return nil }
        return LocalSocket.adopting(descriptor, name: "machine session")
    }

    /// Runs the session: the gate's use (opening every installed region, as a server of its own
    /// would serve them), then `announce` with the machine's server, then waits for a signal.
    ///
    /// The day its use pays is kept in the machine's record as its user's (a server's use,
    /// ``Gate/use(opening:installing:serving:paidBy:reserving:confirm:_:)``): a session that ends because
    /// the service ended (a crash, the OOM killer: its server gone, this process left to init) or
    /// because its terminal hung up leaves it, and that user's next session on this boot serves
    /// out the rest of the day with no use (found by a review: every session's next start after a
    /// crash was a use). One its user stops (Ctrl-C) takes the day with it, as every session pays.
    static func run(_ context: Context, socket: LocalSocket, announce: (MachineSession) -> Void) throws {
        let library = try context.readOnlyRegionLibrary()
        let service = getppid()
        _ = try GateGuard.withUse(context, opening: try library.installed().map(\.id), serving: true) { authorization in
            let session: MachineSession
            do {
                session = try MachineSession(
                    socket: socket, continuing: authorization.continuedDay, deliver: { deadline in try authorization.deliver(before: deadline) {} },
                    ended: { _ in kill(getpid(), SIGTERM) })
            } catch {
                // A session the server refused (its port taken, its regions unreadable) spent
                // nothing, the day it took over included (found by an attack: it went with the
                // refusal, and the next session paid).
                authorization.leaveServingDay()
                throw error
            }
            let signal = SignalRouter.wait(announcing: { announce(session) })
            if session.ended != nil || getppid() != service || signal == SIGHUP { authorization.leaveServingDay() }
            if let reason = session.ended {
                throw GeneralFailure(L.localized("the machine's tile server ended this session: %1$s", reason), kind: .unavailable)
            }
            context.console.note(L.localized("stopping…"))
        }
    }
}
