import Foundation
import MapGateBase
import TestSupport
import Testing
@testable import MapGateServer
@testable import MapGateTrust

/// The sessions system mode's tile server is open for (``MachineSessions``), driven as the service
/// drives them, each session's command played by the test on the other end of a socket pair.
@Suite struct MachineSessionsTests {
    /// The gate as a command leaves it once its user answered the prompt: `count` uses shown, its
    /// own reserved until a tile delivers it.
    func reserved(count: Int) throws -> GateReport {
        var record = GateRecord()
        record.promptsShown = count
        record.reservations = [GateRecord.Reservation(id: "test", process: try #require(ProcessIdentity.current))]
        return GateReport(installedVersion: "1.4.0", record: record, phase: .prompting(usesLeft: 5 - count), graceEnd: nil, maxPrompts: 5, now: Date())
    }

    /// A session, its answers read as the service's thread for it reads them.
    func session(id: Int, socket: LocalSocket) throws -> MachineSessions.Session {
        let session = MachineSessions.Session(id: id, socket: socket)
        try Threads.detach(name: "session-\(id)") {
            while let message = try? MachineSessionMessage.receive(on: socket, timeout: 10) {
                session.answers.withLock { $0.append(message) }
                session.answered.signal()
            }
        }
        return session
    }

    /// Found by a CI failure: a session was added only after its command had been told `ready`,
    /// so a tile its user fetched at once could come first. It was answered on another session's
    /// word and delivered nothing of this one's (after a crash, its user's next session paid
    /// again). The session is the server's to charge before its command hears `ready`, and a tile
    /// that comes meanwhile waits for the `ready` before it asks the command to deliver.
    @Test func aSessionIsChargedBeforeItsCommandIsTold() throws {
        let sessions = MachineSessions(report: try reserved(count: 1), answerTimeout: 10)
        let (first, firstCommand) = try LocalSocket.pair(name: "first session")
        sessions.add(try session(id: 1, socket: first), report: try reserved(count: 1))
        try Threads.detach(name: "first-command") {
            guard case .deliver? = try? MachineSessionMessage.receive(on: firstCommand, timeout: 10) else { return }
            try? MachineSessionMessage.delivered.send(on: firstCommand)
        }
        #expect(try sessions.deliver())

        let (second, secondCommand) = try LocalSocket.pair(name: "second session")
        let round = Locked<Bool?>(nil)
        sessions.add(try session(id: 2, socket: second), report: try reserved(count: 2)) {
            // The command is told now: a tile its user fetches must deliver its use.
            #expect(!sessions.isDelivered, "the session was not pending when its command was told")
            try? Threads.detach(name: "tile") { round.withLock { $0 = (try? sessions.deliver()) ?? false } }
            usleep(200_000)
            try? MachineSessionMessage.ready(url: "http://127.0.0.1:1", regions: 1).send(on: second)
        }
        // The command hears `ready` before the round's `deliver`, and delivers.
        guard case .ready? = try? MachineSessionMessage.receive(on: secondCommand, timeout: 10) else {
            Issue.record("the command heard something before `ready`")
            return
        }
        guard case .deliver? = try? MachineSessionMessage.receive(on: secondCommand, timeout: 10) else {
            Issue.record("no tile asked the session to deliver")
            return
        }
        try MachineSessionMessage.delivered.send(on: secondCommand)
        #expect(waitUntil(timeout: 10) { round.withLock { $0 } == true })
        #expect(sessions.isDelivered)
        #expect(sessions.ownCount == 2)
    }
}
