import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

@testable import MapGateTrust

#if canImport(Glibc)
import Glibc
#endif

/// The record keeps each reserved use with the process of its run until the run delivers
/// (``GateRecord/reservations``): a run that died first gets the use back at the next look, a
/// run still going keeps it, and one that delivers keeps it whatever happens to it afterwards.
@Suite struct GateReservationTests {
    let harness: GateHarness

    /// A gate past its grace: every use prompts.
    init() throws {
        harness = try GateHarness()
        try harness.serve("1.5.0")
        _ = try harness.makeGate().authorizeUse()
        harness.time.advance(days: 31)
    }

    func record() throws -> GateRecord { try harness.makeStore().update { $0 } }

    /// The identity of a process that no longer runs.
    func endedProcess() throws -> ProcessIdentity {
        let current = try #require(ProcessIdentity.current)
        // A pid no process has: the highest the kernel gives out is below 2^22.
        return ProcessIdentity(pid: 4_194_304 + 17, start: current.start, boot: current.boot)
    }

    @Test func aUseInFlightIsReservedWithThisProcessAndDeliveringRemovesIt() throws {
        let gate = try harness.makeGate()
        let shown = try record().promptsShown
        _ = try gate.use { authorization in
            let reserved = try record()
            #expect(reserved.promptsShown == shown + 1)
            #expect(reserved.reservations.map(\.process) == [ProcessIdentity.current])
            #expect(reserved.reservations.map(\.id) == [authorization.reservationID])
            try authorization.deliver {}
            #expect(try record().reservations.isEmpty)
            #expect(try record().promptsShown == shown + 1)
        }
        #expect(try record().promptsShown == shown + 1, "a delivered use is kept")
    }

    @Test func aReservationOfAnEndedProcessIsGivenBackAtTheNextLook() throws {
        let shown = try record().promptsShown
        let ended = try endedProcess()
        try harness.makeStore().update { record in
            record.promptsShown += 1
            record.reservations.append(GateRecord.Reservation(id: "dead", process: ended))
        }
        let after = try record()  // the next look: reconciled by the gate, not the store
        #expect(after.reservations.count == 1, "the store alone changes nothing")
        #expect(try harness.makeGate().status().record.promptsShown == shown)
        #expect(try record().reservations.isEmpty)
    }

    @Test func anotherBootEndsEveryReservation() throws {
        let shown = try record().promptsShown
        let me = try #require(ProcessIdentity.current)
        try harness.makeStore().update { record in
            record.promptsShown += 1
            record.reservations.append(GateRecord.Reservation(id: "before-reboot", process: ProcessIdentity(pid: me.pid, start: me.start, boot: UUID().uuidString.lowercased())))
        }
        #expect(try harness.makeGate().status().record.promptsShown == shown)
    }

    @Test func aReservationOfARunningProcessIsKept() throws {
        let shown = try record().promptsShown
        let sleeper = try BackgroundProcess("/bin/sleep", ["30"])
        defer { sleeper.signal(SIGKILL) }
        let running = try sleeper.identity()
        #expect(running.isRunning)
        try harness.makeStore().update { record in
            record.promptsShown += 1
            record.reservations.append(GateRecord.Reservation(id: "alive", process: running))
        }
        #expect(try harness.makeGate().status().record.promptsShown == shown + 1)
        // The same pid with another start time is another process.
        #expect(!ProcessIdentity(pid: running.pid, start: running.start + 1, boot: running.boot).isRunning)
    }

    /// A run whose reservation another run gave back (it took it for ended: a process in a PID
    /// namespace of its own looks so from outside) counts its use again when it delivers, and
    /// delivers nothing when the gate closed in between.
    @Test func aReservationGivenBackUnderARunningProcessIsCountedAgainAtDelivery() throws {
        let gate = try harness.makeGate()
        let shown = try record().promptsShown
        _ = try gate.use { authorization in
            try harness.makeStore().update { record in
                record.reservations.removeAll()
                record.promptsShown -= 1
            }
            try authorization.deliver {}
        }
        #expect(try record().promptsShown == shown + 1)

        // Closed in between: nothing is delivered.
        let closing = try harness.makeGate()
        var delivered = false
        #expect(throws: GateUseWithdrawnError.self) {
            _ = try closing.use { authorization in
                try harness.makeStore().update { record in
                    record.reservations.removeAll()
                    record.promptsShown = 5
                }
                try authorization.deliver { delivered = true }
            }
        }
        #expect(!delivered)
        #expect(try record().promptsShown == 5)
    }

    /// A delivery whose record cannot be told before its deadline (the state database busy that
    /// long) delivers nothing: the machine's tile server, for which a `serve` session delivers,
    /// had stopped waiting and answered 503, and the use was counted for no tile. The wait for the
    /// lock ends at the deadline (not after the 10 s busy timeout), the step does not run, and the
    /// use goes back at the end of the run.
    @Test func aDeliveryThatCannotBeToldBeforeItsDeadlineDeliversNothing() throws {
        let gate = try harness.makeGate()
        let shown = try record().promptsShown
        let holder = try SQLiteDatabase(path: harness.stateFolder + "/state.sqlite", mode: .readWriteCreate)
        var ran = false
        var waited = 0.0
        _ = try gate.use { authorization in
            try holder.execute("BEGIN IMMEDIATE")
            let started = MonotonicClock.seconds
            #expect(throws: GateDeliveryLateError.self) { try authorization.deliver(before: started + 0.5) { ran = true } }
            waited = MonotonicClock.seconds - started
            try holder.execute("ROLLBACK")
            #expect(!authorization.isDelivered)
        }
        #expect(!ran)
        #expect(waited < 3, "waited \(waited) s for the lock")
        #expect(try record().promptsShown == shown, "a use was kept for a delivery nobody waited for")
        #expect(try record().reservations.isEmpty)
    }

    /// A deadline that passed while the record's lock was being had: the change is rolled back,
    /// the record keeps the reservation, and a delivery in time afterwards keeps the use.
    @Test func aDeliveryPastItsDeadlineOnceTheLockIsHadIsRolledBack() throws {
        let gate = try harness.makeGate()
        let shown = try record().promptsShown
        _ = try gate.use { authorization in
            #expect(throws: GateDeliveryLateError.self) { try authorization.deliver(before: MonotonicClock.seconds - 1) {} }
            #expect(try record().reservations.count == 1, "the record was told")
            try authorization.deliver(before: MonotonicClock.seconds + 30) {}
            #expect(try record().reservations.isEmpty)
        }
        #expect(try record().promptsShown == shown + 1)
    }

    /// A record sealed with a reservation cannot lose it without being taken for tampered with.
    @Test func theSealCoversTheReservations() throws {
        let me = try #require(ProcessIdentity.current)
        try harness.makeStore().update { record in
            record.promptsShown += 1
            record.reservations.append(GateRecord.Reservation(id: "sealed", process: me))
        }
        let path = harness.directory.statePath
        let edit = try runProcess("/usr/bin/sqlite3", [path, "UPDATE gate SET reservations = NULL"])
        #expect(edit.status == 0, "\(edit.stderr)")
        let home = try runProcess("/usr/bin/sqlite3", [harness.stateFolder + "/state.sqlite", "UPDATE gate SET reservations = NULL"])
        #expect(home.status == 0, "\(home.stderr)")
        #expect(try harness.makeStore().update { $0.isRecovering })
    }
}
