import FoundationEssentials
import MapGateBase
import MapGateTrust
import Synchronization

/// System mode's one tile server per machine (issue 36), run by the system service on the port
/// its managed policy names. It runs while a session is open: the first `mapgate serve` or
/// `mapgate open` of any user starts it, the end of the last stops it. Each session's command asks
/// the user at the user's terminal and reserves a use; the server charges it when it answers its
/// next tile (``MachineSessions``). Every session is told the same URL.
public final class MachineTileServer: Sendable {
    /// Starts the server, charging its tiles to `sessions`.
    public typealias Start = @Sendable (_ sessions: MachineSessions) throws -> TileServer

    private struct Running {
        var server: TileServer
        var sessions: MachineSessions
    }

    private let start: Start
    private let makeGate: @Sendable () throws -> Gate
    private let running = Locked<Running?>(nil)
    private let nextID = Atomic<Int>(0)
    private let log: @Sendable (String) -> Void

    /// - Parameters:
    ///   - makeGate: the machine's gate (the service's), read when the server starts.
    ///   - log: a line for the service's log.
    public init(start: @escaping Start, makeGate: @escaping @Sendable () throws -> Gate, log: @escaping @Sendable (String) -> Void) {
        self.start = start
        self.makeGate = makeGate
        self.log = log
    }

    /// Whether the server runs now.
    public var isRunning: Bool { running.withLock { $0 != nil } }

    /// Serves one session on `socket`, the service's end of the pair its command was given, until
    /// the session ends (its command exits). Blocks: run it on a thread of its own.
    public func serve(session socket: LocalSocket, caller: String) {
        // The command attaches once its user has answered the prompt: that may take a while.
        guard case .attach? = try? MachineSessionMessage.receive(on: socket, timeout: .infinity) else { return }
        let id = nextID.add(1, ordering: .relaxed).newValue
        let attached: (sessions: MachineSessions, url: String, regions: Int)
        do {
            attached = try running.withLock { running in
                let report = try makeGate().status()
                if let current = running {
                    // Its use may be the one that closed the gate: the server looks again at once.
                    current.sessions.noteSession(report)
                    current.server.lookAtGateNow()
                } else {
                    let sessions = MachineSessions(report: report)
                    running = Running(server: try start(sessions), sessions: sessions)
                    log("\(caller): started the machine's tile server at \(running!.server.baseURL)")
                }
                return (running!.sessions, running!.server.baseURL, running!.server.service.regions.count)
            }
        } catch {
            log("\(caller): the machine's tile server cannot start: \(errorMessage(error))")
            try? MachineSessionMessage.refused(reason: errorMessage(error)).send(on: socket)
            return
        }
        let session = MachineSessions.Session(id: id, socket: socket)
        attached.sessions.add(session)
        defer { detach(session, from: attached.sessions, caller: caller) }
        guard (try? MachineSessionMessage.ready(url: attached.url, regions: attached.regions).send(on: socket)) != nil else { return }
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
        session.answered.signal()  // a delivery round waiting for it learns it ended
    }

    private func detach(_ session: MachineSessions.Session, from sessions: MachineSessions, caller: String) {
        sessions.remove(session.id)
        let stopping: TileServer? = running.withLock { running in
            guard let current = running, current.sessions === sessions, sessions.count == 0 else { return nil }
            running = nil
            return current.server
        }
        if let stopping {
            stopping.stop()
            log("\(caller): the last session ended; the machine's tile server stopped")
        }
    }

    /// Stops the server (the service is stopping); its sessions' commands are stopped by the service.
    public func stop() {
        running.withLock { running in
            running?.server.stop()
            running = nil
        }
    }
}
