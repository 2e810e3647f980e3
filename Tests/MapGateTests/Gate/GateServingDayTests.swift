import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

@testable import MapGateTrust

/// A server's paid day kept in the record (``GateRecord/servingDays``): which day a server
/// starting after one that died may serve out (``GatePolicy/unfinishedServingDay(_:boot:namespace:at:isHeld:isRunning:)``),
/// which days are forgotten, and how they are kept beside the record so that a mapgate from
/// before them still reads the record as sealed.
@Suite struct GateServingDayTests {
    let policy = GatePolicy(installed: try! AppVersion("1.4.0"))
    let now = Date(timeIntervalSince1970: 1_900_000_000)
    let boot = BootReading(id: "boot-a", seconds: 200_000)
    let namespace: UInt64 = 4_026_531_836

    /// A record past its grace with `shown` uses counted, and one day paid an hour ago by a
    /// server of this boot and namespace (process 4242).
    func record(shown: Int = 2, paidSecondsAgo: Double = 3_600, namespace: UInt64? = nil, count: Int? = nil) -> GateRecord {
        var record = GateRecord()
        record.pendingVersion = "1.5.0"
        record.firstSeen = now.addingTimeInterval(-40 * 86_400)
        record.promptsShown = shown
        record.servingDays = [
            GateRecord.ServingDay(
                process: ProcessIdentity(pid: 4242, start: 7, boot: boot.id), namespace: namespace ?? self.namespace, count: count ?? shown,
                paidAt: now.addingTimeInterval(-paidSecondsAgo), bootSeconds: boot.seconds - paidSecondsAgo, takenOver: false)
        ]
        return record
    }

    func unfinished(_ record: GateRecord, boot: BootReading? = nil, namespace: UInt64? = nil, isHeld: Bool = false, running: Bool = false) -> Int? {
        policy.unfinishedServingDay(record, boot: boot ?? self.boot, namespace: namespace ?? self.namespace, at: now, isHeld: isHeld, isRunning: { _ in running })
    }

    @Test func theDayOfADeadServerOfThisBootAndNamespaceIsTakenOver() {
        #expect(unfinished(record()) == 0)
    }

    /// A running (or only stopped) server keeps its day; one of another PID namespace may run
    /// though it looks ended from here (found by a review); another boot ended every process.
    @Test func aRunningServerOrOneOfAnotherNamespaceOrBootKeepsItsDay() {
        #expect(unfinished(record(), running: true) == nil)
        #expect(unfinished(record(namespace: namespace + 1)) == nil)
        #expect(unfinished(record(), boot: BootReading(id: "boot-b", seconds: 200_000)) == nil)
        #expect(
            policy.unfinishedServingDay(record(), boot: boot, namespace: nil, at: now, isHeld: false, isRunning: { _ in false }) == nil,
            "a server that cannot tell its namespace takes nothing over")
    }

    /// In system mode the record is the machine's: a day is taken over only by a session of the
    /// user whose session paid it, and a per-user day (no owner) only where there is none. A day
    /// without an owner is kept as before (no `owner` in the record's bytes).
    @Test func aDayIsTakenOverOnlyByItsOwner() throws {
        var owned = record()
        owned.servingDays[0].owner = 64_103
        let take = { (owner: UInt32?) in
            policy.unfinishedServingDay(owned, boot: boot, namespace: namespace, owner: owner, at: now, isHeld: false, isRunning: { _ in false })
        }
        #expect(take(64_103) == 0)
        #expect(take(64_102) == nil)
        #expect(take(nil) == nil)
        #expect(policy.unfinishedServingDay(record(), boot: boot, namespace: namespace, owner: 64_103, at: now, isHeld: false, isRunning: { _ in false }) == nil)
        let plain = String(decoding: try JSONEncoder().encode(record().servingDays), as: UTF8.self)
        #expect(!plain.contains("owner"), "\(plain)")
        #expect(String(decoding: try JSONEncoder().encode(owned.servingDays), as: UTF8.self).contains(#""owner":64103"#))
    }

    /// The day ends when either clock says a day has passed: the gate's time (a clock set
    /// forward) or the boot clock (a clock set back or frozen).
    @Test func aDayIsOverByEitherClock() {
        #expect(unfinished(record(paidSecondsAgo: 86_400)) == nil)
        var frozen = record()
        frozen.servingDays[0].bootSeconds = boot.seconds - 86_401
        #expect(unfinished(frozen) == nil, "the boot clock ran a day while the gate's time stood")
        var forward = record()
        forward.servingDays[0].paidAt = now.addingTimeInterval(-86_401)
        #expect(unfinished(forward) == nil, "the gate's time ran a day")
        // A boot clock behind the day's was set back (a time namespace; found by an attack: the
        // time between a server's death and its restart was never counted).
        #expect(unfinished(record(), boot: BootReading(id: boot.id, seconds: boot.seconds - 3_601)) == nil)
    }

    /// A gate in a user namespace of its own (where `/proc`, the boot id and the boot clock can
    /// be made to lie: found by an attack) neither takes a dead server's day over nor keeps one.
    @Test func aConfinedServerNeitherTakesADayOverNorKeepsOne() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        _ = try harness.makeGate().authorizeUse()
        harness.time.advance(days: 31)
        let reading = BootReading(id: "boot-a", seconds: 1_000)
        let clock = Clock({ harness.time.now }, boot: { reading })
        func gate(confined: Bool) throws -> Gate {
            Gate(store: try harness.makeStore(), settings: harness.settings, clock: clock, installed: try AppVersion("1.4.0"), isConfined: confined)
        }
        // A process of that boot that no longer runs (this machine's boot is another).
        let dead = ProcessIdentity(pid: 4_194_304 + 17, start: 1, boot: reading.id)
        try harness.makeStore().update { record in
            record.servingDays = [
                GateRecord.ServingDay(
                    process: dead, namespace: PIDNamespace.current, count: record.promptsShown, paidAt: harness.time.now, bootSeconds: 999,
                    takenOver: false)
            ]
        }
        let confined = try gate(confined: true).use(serving: true) { authorization in
            try authorization.deliver {}
            // While it serves (a clean end forgets its own day anyway).
            #expect(try harness.makeStore().update { $0 }.servingDays.map(\.process) == [dead], "a confined server kept a day")
            return authorization.continuedDay
        }
        #expect(confined == .some(nil), "a confined server took a day over")
        let free = try gate(confined: false).use(serving: true) { $0.continuedDay }
        #expect(free??.count != nil, "the unconfined server takes the day over")
    }

    /// With the gate closed, a dead server's day is served out only where that server would
    /// still serve: on its own last use, or while the gate is closed only by uses others hold.
    @Test func aClosedGateLeavesOnlyTheLastUsesDay() {
        #expect(unfinished(record(shown: 5)) == 0, "the last use's day")
        #expect(unfinished(record(shown: 5, count: 4)) == nil, "another's last use closed the gate")
        #expect(unfinished(record(shown: 5, count: 4), isHeld: true) == 0, "a held use may come back")
    }

    @Test func daysOverOrOfAnotherBootAreForgottenWhetherTheirServersRunOrNot() {
        var kept = record()
        policy.forgetEndedServingDays(&kept, boot: boot, at: now)
        #expect(kept.servingDays.count == 1)
        var over = record(paidSecondsAgo: 90_000)
        policy.forgetEndedServingDays(&over, boot: boot, at: now)
        #expect(over.servingDays.isEmpty)
        var otherBoot = record()
        policy.forgetEndedServingDays(&otherBoot, boot: BootReading(id: "boot-b", seconds: 10), at: now)
        #expect(otherBoot.servingDays.isEmpty)
    }

    @Test func aNewDayReplacesTheServersOwnAndIsItsOwn() {
        var taken = record()
        taken.servingDays[0].takenOver = true
        let process = taken.servingDays[0].process
        policy.recordServingDay(&taken, process: process, namespace: namespace, count: 3, at: now, boot: boot)
        #expect(taken.servingDays.count == 1)
        #expect(taken.servingDays[0].count == 3 && !taken.servingDays[0].takenOver && taken.servingDays[0].paidAt == now)
    }

    /// An update that starts a newer version's count forgets the days of the old count.
    @Test func aNewCountForgetsTheOldCountsDays() {
        var counted = record()
        counted.pendingVersion = "1.6.0"
        counted.countingFor = "1.5.0"
        GatePolicy(installed: try! AppVersion("1.5.0")).reconcile(&counted, at: now)
        #expect(counted.promptsShown == 0 && counted.servingDays.isEmpty)
    }

    /// The days are kept beside the record's row under a seal of their own, tied to the record's
    /// generation: the row seals without them (a mapgate from before them reads it as sealed, and
    /// saves it with a new generation), and days of another generation are read as none.
    @Test func theDaysAreSealedBesideTheRecordForItsGenerationAlone() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        _ = try harness.makeGate().authorizeUse()
        harness.time.advance(days: 31)
        let days = record().servingDays
        try harness.makeStore().update { $0.servingDays = days }
        let path = harness.stateFolder + "/state.sqlite"
        guard case .sealed(let saved) = try GateRecord.load(from: try SQLiteDatabase(path: path, mode: .readWriteCreate)) else {
            Issue.record("the record with days is not sealed")
            return
        }
        #expect(saved.servingDays == days)
        // Without the table (as a mapgate before it reads the row), the row is sealed.
        let database = try SQLiteDatabase(path: path, mode: .readWriteCreate)
        try database.execute("UPDATE serving_days SET generation = generation - 1")
        guard case .sealed(let older) = try GateRecord.load(from: database) else {
            Issue.record("days of another generation made the record tampered")
            return
        }
        #expect(older.servingDays.isEmpty)
        try database.execute("UPDATE serving_days SET generation = generation + 1, days = replace(days, '4242', '4243')")
        guard case .sealed(let edited) = try GateRecord.load(from: database) else {
            Issue.record("edited days made the record tampered")
            return
        }
        #expect(edited.servingDays.isEmpty, "edited days are read as none")
        // A table dropped by hand is none too, and the next save makes it again (found by an
        // attack: every gated command failed with "no such table").
        try database.execute("DROP TABLE serving_days")
        guard case .sealed(let dropped) = try GateRecord.load(from: database) else {
            Issue.record("a dropped table made the record tampered")
            return
        }
        #expect(dropped.servingDays.isEmpty)
        try harness.makeStore().update { $0.servingDays = days }
        guard case .sealed(let again) = try GateRecord.load(from: database) else {
            Issue.record("the record saved again is not sealed")
            return
        }
        #expect(again.servingDays == days)
    }
}
