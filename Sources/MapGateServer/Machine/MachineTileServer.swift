import FoundationEssentials
import MapGateBase
import MapGateTrust
import Synchronization

/// System mode's one tile server per machine (issue 36), run by the system service on the port
/// its managed policy names. It runs while a session is open: the first `mapgate serve` or
/// `mapgate open` of any user starts it, the end of the last stops it. Each session's command asks
/// the user at the user's terminal and reserves a use; the server charges it when it answers its
/// next tile (``MachineSessions``). Every session is told the same URL.
///
/// The port is the service's between sessions too: it is bound once (when the service starts, or
/// at the first session that finds it free) and held, each tile server serving a duplicate of the
/// socket, and while no session is open a small server on it answers every request 503
/// (``MachineClosedDoor``). So no user can take the port while no session runs (found by an
/// attack), and nobody's client waits on a port that answers nothing.
public final class MachineTileServer: Sendable {
    /// Starts the server on `listener` (and `others`, answered alike), charging its tiles to
    /// `sessions`.
    public typealias Start = @Sendable (_ sessions: MachineSessions, _ listener: HTTPListener, _ others: [HTTPListener]) throws -> TileServer

    private struct Running {
        var server: TileServer
        var sessions: MachineSessions
    }

    private struct Port {
        /// The tile server while a session is open.
        var running: Running?
        /// The held socket, once bound.
        var held: HTTPListener?
        /// What answers on it while no session is open.
        var door: HTTPServer?
        /// `[::1]` at the same port, bound and never answered, so that no user answers there.
        var reservedIPv6: IPv6LoopbackReservation?
        /// Or `[::1]` at the same port as socket activation handed it over, listening from boot
        /// (`mapgate-system-tiles-ipv6.socket`): answered like the port, door and sessions alike.
        var heldIPv6: HTTPListener?
        /// The service is stopping (``endSessions()``): no session starts (found by an attack:
        /// one that came then was signalled with the rest, which read as its user's Ctrl-C, and
        /// the day it had taken over went).
        var isStopping = false

        /// Duplicates of the held sockets, for one server: the port's, then `[::1]`'s if held.
        func duplicates() throws -> (HTTPListener, [HTTPListener]) {
            guard let held else { throw HTTPServerError(message: L.localized("the listening socket was already handed to a server")) }
            return (try held.duplicate(), try heldIPv6.map { [try $0.duplicate()] } ?? [])
        }
    }

    private let start: Start
    private let bind: @Sendable () throws -> HTTPListener
    private let makeGate: @Sendable () throws -> Gate
    private let port = Locked(Port())
    private let nextID = Atomic<Int>(0)
    private let log: @Sendable (String) -> Void

    /// - Parameters:
    ///   - bind: binds the machine's tile port (tried at once, and again at a session while it
    ///     could not be bound).
    ///   - ipv6: `[::1]` at the port, listening, as socket activation handed it over; nil to
    ///     bind it without listening (``IPv6LoopbackReservation``).
    ///   - makeGate: the machine's gate (the service's), read when the server starts.
    ///   - log: a line for the service's log.
    public init(
        start: @escaping Start, bind: @escaping @Sendable () throws -> HTTPListener, ipv6: HTTPListener? = nil,
        makeGate: @escaping @Sendable () throws -> Gate, log: @escaping @Sendable (String) -> Void
    ) {
        self.start = start
        self.bind = bind
        self.makeGate = makeGate
        self.log = log
        port.withLock { port in
            port.heldIPv6 = ipv6
            do {
                port.held = try bind()
                reserveIPv6(&port)
                openDoor(&port)
            } catch {
                log("the machine's tile port cannot be held: \(errorMessage(error)); each session will try again")
            }
        }
    }

    /// The descriptors the port's answer between sessions may take (``MachineClosedDoor``), for
    /// the service's open-file limit.
    public static let descriptorsBetweenSessions = MachineClosedDoor.mostConnections + MachineClosedDoor.reserveConnections

    /// The held port's answer while no session is open (the ``MachineClosedDoor``): started on a
    /// duplicate of the held socket. One that cannot start leaves the port held and unanswered.
    private func openDoor(_ port: inout Port) {
        guard port.running == nil, port.door == nil, let held = port.held else { return }
        do {
            let (listener, others) = try port.duplicates()
            port.door = try HTTPServer(listener: listener, alsoOn: others, settings: MachineClosedDoor.settings(for: held, sockets: 1 + others.count)) { MachineClosedDoor() }
        } catch {
            log("the machine's tile port is held but not answered between sessions: \(errorMessage(error))")
        }
    }

    /// Binds `[::1]` at the held port unless done (``IPv6LoopbackReservation``); one someone else
    /// holds is said in the log, and tried again at the next session.
    private func reserveIPv6(_ port: inout Port) {
        guard port.reservedIPv6 == nil, port.heldIPv6 == nil, let held = port.held, held.host == "127.0.0.1" else { return }
        do {
            port.reservedIPv6 = try IPv6LoopbackReservation(port: held.port)
        } catch {
            log("\(errorMessage(error)): a client that asks for localhost may reach another program there")
        }
    }

    /// Serves one session on `socket`, the service's end of the pair its command was given, until
    /// the session ends (its command exits). Blocks: run it on a thread of its own.
    public func serve(session socket: LocalSocket, caller: String) {
        // The command attaches once its user has answered the prompt: that may take a while.
        let continuing: ContinuedServingDay?
        switch try? MachineSessionMessage.receive(on: socket, timeout: .infinity) {
        case .attach?:
            continuing = nil
        case .attachContinuing(let count, let paidAt, let served)? where paidAt.isFinite && served.isFinite && served >= 0 && count >= 0:
            // The command's word, checked by its gate against the machine's record: the command
            // runs as the service's user, from the service's own executable.
            continuing = ContinuedServingDay(pid: 0, count: count, paidAt: Date(timeIntervalSince1970: paidAt), served: served)
        default:
            return
        }
        let id = nextID.add(1, ordering: .relaxed).newValue
        let session = MachineSessions.Session(id: id, socket: socket)
        let sessions: MachineSessions
        do {
            // The session is added, then `ready` sent, under the port's lock (no detach stops the
            // server it was told of) and between delivery rounds (``MachineSessions/add``): no
            // round asks it before `ready` (its command failed with "answered out of turn" when a
            // tile came between the two, found by an attack), and a tile its user fetches once
            // told is charged to it (found looking into a CI failure: added after `ready`, a tile
            // that came first was answered on another session's word and delivered nothing of
            // this one's).
            sessions = try port.withLock { port in
                if port.isStopping { throw MachineSessionError(reason: L.localized("the system service is stopping; start the session again in a moment")) }
                let report = try makeGate().status()
                let wasRunning = port.running != nil
                if !wasRunning {
                    let sessions = MachineSessions(report: report)
                    if port.held == nil { port.held = try bind() }
                    reserveIPv6(&port)
                    port.door?.stop()
                    port.door = nil
                    do {
                        let (listener, others) = try port.duplicates()
                        port.running = Running(server: try start(sessions, listener, others), sessions: sessions)
                    } catch {
                        openDoor(&port)
                        throw error
                    }
                    log("\(caller): started the machine's tile server at \(port.running!.server.baseURL)")
                }
                let running = port.running!
                running.sessions.add(session, report: report, continuing: continuing) {
                    try? MachineSessionMessage.ready(url: running.server.baseURL, regions: running.server.service.regions.count).send(on: socket)
                }
                // Its use may be the one that closed the gate: the server looks again at once (it
                // is open for the tile that delivers a use a session holds).
                if wasRunning { running.server.lookAtGateNow() }
                return running.sessions
            }
        } catch {
            log("\(caller): the machine's tile server cannot start: \(errorMessage(error))")
            try? MachineSessionMessage.refused(reason: errorMessage(error)).send(on: socket)
            return
        }
        defer {
            // A delivery round waiting for it learns it ended (also when it ended before `ready`
            // went out: a round then waited its whole 10 s, every tile behind it).
            session.answered.signal()
            detach(session, from: sessions, caller: caller)
        }
        // The session's answers, until its command ends (the end of the stream).
        while let message = try? MachineSessionMessage.receive(on: socket, timeout: .infinity) {
            switch message {
            case .delivered, .failed:
                session.answers.withLock { $0.append(message) }
                session.answered.signal()
            default:
                continue
            }
        }
    }

    private func detach(_ session: MachineSessions.Session, from sessions: MachineSessions, caller: String) {
        sessions.remove(session.id)
        // Stopped, said and the door opened under the lock: a session that comes meanwhile waits
        // for it and starts the next server after, never beside it on the port (found by an
        // attack: the two servers overlapped, "stopped" was logged after the new "started", and
        // a client saw an empty reply).
        port.withLock { port in
            guard let current = port.running, current.sessions === sessions, sessions.count == 0 else { return }
            port.running = nil
            current.server.stop()
            log("\(caller): the last session ended; the machine's tile server stopped")
            openDoor(&port)
        }
    }

    /// Ends every session (the service is stopping): each command is told as when the service
    /// dies, by its socket's end, and leaves the day its use paid to its user's next session
    /// (found by a review: an upgrade's restart signalled the sessions, which read as their users'
    /// Ctrl-C, and every user's next session paid).
    public func endSessions() {
        port.withLock { port in
            port.isStopping = true
            port.running?.sessions.endAll()
        }
    }

    /// Stops the server and lets the port go (the service is stopping); its sessions' commands are
    /// stopped by the service.
    public func stop() {
        port.withLock { port in
            port.running?.server.stop()
            port.running = nil
            port.door?.stop()
            port.door = nil
            port.held = nil
            port.reservedIPv6 = nil
            port.heldIPv6 = nil
        }
    }
}
