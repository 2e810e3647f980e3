import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The gate against a user who edits its files, moves the clock or points it elsewhere. Each
/// test here got tiles out of a closed gate (or kept it from closing) in 1.4.0.
@Suite struct GateIntegrityTests {
    let day: TimeInterval = 86_400

    @Test func graceCountsFromTheReleaseDateNotAFreshSighting() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0", released: harness.start.addingTimeInterval(-40 * day))
        #expect(try harness.use() == .prompt(5))
        try harness.serve("1.5.0", released: harness.start.addingTimeInterval(-10 * day))
        let other = try GateHarness()
        try other.serve("1.5.0", released: other.start.addingTimeInterval(-10 * day))
        #expect(try other.use() == .grace)
        other.time.advance(days: 20)
        #expect(try other.use() == .prompt(5))
    }

    /// 1.4.0: one run with the clock in 2076 made the release "first seen" then, and every later
    /// run an uncounted grace use.
    @Test func aClockFarAheadBuysNoGrace() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0", released: harness.start)
        harness.time.set(harness.start.addingTimeInterval(50 * 365 * day))
        #expect(try harness.use() == .prompt(5))
        harness.time.set(harness.start.addingTimeInterval(day))
        let before = harness.lookups
        #expect(try harness.use() == .prompt(4))
        // A clock that reads earlier than the last attempt makes a lookup due at once.
        #expect(harness.lookups == before + 1)
    }

    @Test func anAnswerForAnotherAppNeitherResetsNorStartsAnything() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        try harness.serve("1.4.0", trackID: 43)  // "up to date" from somebody else's app
        harness.time.advance(days: 2)
        let report = try harness.makeGate().check()
        #expect(report.lookupError?.localizedDescription.contains("not app id 42") == true)
        #expect(try harness.use() == .prompt(4))
    }

    @Test func closeAfterDaysClosesWhateverTheCount() throws {
        let harness = try GateHarness(closeAfterDays: 10)
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        harness.time.advance(days: 10)
        #expect(try harness.use() == .refused)
    }

    // MARK: Two copies

    func closeToTwoLeft(_ harness: GateHarness) throws {
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        #expect(try harness.use() == .prompt(4))
        #expect(try harness.use() == .prompt(3))
    }

    var copies: (GateHarness) -> [String] {
        { [$0.stateFolder + "/state.sqlite", $0.directory.statePath] }
    }

    func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// A data directory's copy follows the user's: losing it loses nothing, and says nothing.
    @Test func theDataDirectorysCopyDeletedIsRestoredQuietly() throws {
        let harness = try GateHarness()
        try closeToTwoLeft(harness)
        remove(copies(harness)[1])
        let gate = try harness.makeGate()
        #expect(try gate.authorizeUse().decision == .prompt(usesLeft: 2))
        #expect(gate.stateNotes.isEmpty, "\(gate.stateNotes)")
        #expect(FileManager.default.fileExists(atPath: copies(harness)[1]))
    }

    /// The user's own copy deleted while a data directory's copy survives: that copy may be an
    /// old one brought back, so the state is lost and fails closed until a lookup (round two).
    @Test func theUsersCopyDeletedFailsClosed() throws {
        let harness = try GateHarness()
        try closeToTwoLeft(harness)
        remove(copies(harness)[0])
        try harness.serve(nil)
        let gate = try harness.makeGate()
        #expect(throws: GateRecoveryError.self) { try gate.authorizeUse() }
        #expect(gate.stateNotes.contains { $0.contains("is new while another copy holds a saved record") }, "\(gate.stateNotes)")
        // Online: the release (no date in this answer) is past its grace: no uses left.
        try harness.serve("1.5.0")
        #expect(try harness.use() == .refused)
    }

    /// Another state folder for one run (`XDG_STATE_HOME` set in a login shell's profile and not
    /// in the systemd user service, or the other way round) while the record is still where the
    /// earlier runs kept it: nothing was lost (found by an attack: the run failed closed and, with a
    /// newer version out a month, the gate closed on an honest user with uses left). The count
    /// goes on, offline too, and back in the usual folder.
    @Test func anotherStateFolderForOneRunLosesNothing() throws {
        let harness = try GateHarness()
        try closeToTwoLeft(harness)
        try harness.serve(nil)
        let gate = Gate(
            store: try GateStore(stateFolder: harness.root.path + "/other-state", directory: harness.directory, clock: harness.time.clock),
            settings: harness.settings, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
        #expect(try gate.authorizeUse().decision == .prompt(usesLeft: 2))
        #expect(gate.stateNotes.contains { $0.contains("where an earlier run kept it") }, "\(gate.stateNotes)")
        #expect(try harness.use() == .prompt(1))
        #expect(try harness.makeGate().stateNotes.isEmpty)
    }

    /// The data directory's copy names the earlier folder, but what is there now is an older copy
    /// brought back (a lower generation than the data directory's): the record stays lost.
    @Test func anOlderCopyWhereTheRecordWasKeptIsNoProof() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        let saved = harness.root.path + "/saved-state"
        try FileManager.default.createDirectory(atPath: saved, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: copies(harness)[0], toPath: saved + "/state.sqlite")
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        #expect(try harness.use() == .prompt(4))
        let data = try SQLiteDatabase(path: copies(harness)[1], mode: .readWriteCreate)
        try data.execute("UPDATE gate_home SET path = ?", [.text(saved + "/state.sqlite")])
        try harness.serve(nil)
        let gate = Gate(
            store: try GateStore(stateFolder: harness.root.path + "/other-state", directory: harness.directory, clock: harness.time.clock),
            settings: harness.settings, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
        #expect(throws: GateRecoveryError.self) { try gate.authorizeUse() }
        #expect(gate.stateNotes.contains { $0.contains("is new while another copy holds a saved record") }, "\(gate.stateNotes)")
        // Nor is the data directory's own copy, named as where the record was kept (found by the
        // next attack: a restored copy named itself).
        try data.execute("UPDATE gate_home SET path = ?", [.text(copies(harness)[1])])
        let itself = Gate(
            store: try GateStore(stateFolder: harness.root.path + "/third-state", directory: harness.directory, clock: harness.time.clock),
            settings: harness.settings, clock: harness.time.clock, installed: try AppVersion("1.4.0"))
        #expect(throws: GateRecoveryError.self) { try itself.authorizeUse() }
    }

    /// 1.4.0: copy `state.sqlite` while open, copy it back once closed, and it was open again.
    @Test(arguments: [0, 1])
    func aCopyRolledBackLosesToTheNewerGeneration(index: Int) throws {
        let harness = try GateHarness()
        try closeToTwoLeft(harness)
        let path = copies(harness)[index]
        let saved = harness.root.file("saved.sqlite")
        _ = try harness.makeGate().status()  // checkpoint-free copy: the WAL is folded in below
        try FileManager.default.copyItem(atPath: path, toPath: saved)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: saved + suffix)
        }
        #expect(try harness.use() == .prompt(2))
        #expect(try harness.use() == .prompt(1))
        #expect(try harness.use() == .refused)
        remove(path)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: saved + suffix) {
            try FileManager.default.copyItem(atPath: saved + suffix, toPath: path + suffix)
        }
        let gate = try harness.makeGate()
        if index == 0 {
            // The user's copy rolled back: the data directory's newer one wins.
            #expect(throws: GateClosedError.self) { try gate.authorizeUse() }
        } else {
            // The data directory's copy rolled back: the user's wins, as with any older data directory.
            #expect(throws: GateClosedError.self) { try gate.authorizeUse() }
            #expect(gate.stateNotes.isEmpty, "\(gate.stateNotes)")
        }
    }

    @Test func bothCopiesDamagedFailClosedUntilALookup() throws {
        let harness = try GateHarness()
        try closeToTwoLeft(harness)
        try FileManager.default.createDirectory(atPath: harness.directory.regionsPath, withIntermediateDirectories: true)
        try Data("a region".utf8).write(to: URL(fileURLWithPath: harness.directory.regionPath("r")))
        for path in copies(harness) {
            remove(path)
            try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        }
        // Offline: refused without counting, with the reason.
        try harness.serve(nil)
        let error = #expect(throws: GateRecoveryError.self) { try harness.makeGate().authorizeUse() }
        #expect(error?.kind == .unavailable)
        // Online, the release (no date in this answer) counts as past its grace: no uses left.
        try harness.serve("1.5.0")
        #expect(try harness.use() == .refused)
    }

    @Test func bothCopiesLostWithARecentReleaseKeepTheGrace() throws {
        let harness = try GateHarness()
        try FileManager.default.createDirectory(atPath: harness.directory.regionsPath, withIntermediateDirectories: true)
        try Data("a region".utf8).write(to: URL(fileURLWithPath: harness.directory.regionPath("r")))
        try harness.serve("1.5.0", released: harness.start.addingTimeInterval(-3 * day))
        #expect(try harness.use() == .grace)
        #expect(try harness.makeGate().status().record.isRecovering == false)
    }

    /// A state folder that is the data directory under another name would be one copy, not two:
    /// putting back a saved copy of it would reopen a closed gate (found by an attack), and two
    /// write locks on one file would wait on each other. Refused at once, naming both.
    @Test func aStateFolderThatIsTheDataDirectoryIsRefused() throws {
        let harness = try GateHarness()
        try harness.directory.prepare()
        try FileManager.default.createSymbolicLink(atPath: harness.stateFolder, withDestinationPath: harness.directory.path)
        try harness.serve("1.5.0")
        let started = Date()
        #expect {
            _ = try harness.use()
        } throws: { error in
            (error as? GeneralFailure)?.kind == .usage && errorMessage(error).contains("are one file")
        }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func aNewUserWithNothingInstalledStartsAsBefore() throws {
        let harness = try GateHarness()
        try harness.serve(nil)
        #expect(try harness.use() == .open)
    }

    // MARK: Trusted time

    /// A catalog taken in by the clock's reading while the gate's clock ran ahead (a clock once
    /// wrong ahead, set right since) is judged by the reading on later runs too; once trusted time
    /// has set the gate's clock, by the gate's clock again (found by an attack: the lead, measured
    /// against the clock that was wrong, kept accepting a catalog the store's time said had expired).
    @Test func trustedTimeEndsTheReliefOfACatalogTakenByTheReading() throws {
        let store = try HTTPSStoreOrigin()
        let harness = try GateHarness()
        try harness.serve(nil)
        let json = #"{"formatVersion": 1, "publisher": "P", "generated": "\#(ISODate.string(harness.start))", "expires": "\#(ISODate.string(harness.start.addingTimeInterval(30 * day)))", "serial": 1, "regions": []}"#
        let catalog = try Catalog.parse(Data(json.utf8), sourceURL: "https://maps.example/catalog.json")
        harness.time.set(harness.start.addingTimeInterval(2 * 365 * day))
        _ = try harness.makeGate().status()
        harness.time.set(harness.start.addingTimeInterval(day))
        try harness.makeGate().accept(catalog, sha256: "a", signedBy: "K")
        harness.time.set(harness.start.addingTimeInterval(2 * day))
        try harness.makeGate().accept(catalog, sha256: "a", signedBy: "K")
        #expect(try harness.makeGate().status().record.catalogSerials["K"]?.lead != nil)
        // Online: the store's time, 60 days on, is trusted; the catalog expired 30 days before it.
        harness.lookUp(at: store)
        try store.answer(version: "1.4.0", trackID: 42, date: harness.start.addingTimeInterval(60 * day))
        #expect(try harness.makeGate().check().lookupError == nil)
        #expect(try harness.makeGate().status().record.catalogSerials["K"]?.lead == nil)
        let refused = #expect(throws: CatalogError.self) { try harness.makeGate().accept(catalog, sha256: "a", signedBy: "K") }
        #expect(refused?.reason.contains("expired on") == true, "\(String(describing: refused))")
    }

    /// An HTTPS answer's `Date` ahead of a clock the user set back: the gate goes by the `Date`.
    @Test func trustedTimeAheadOfTheLocalClockWins() throws {
        let store = try HTTPSStoreOrigin()
        let harness = try GateHarness()
        harness.lookUp(at: store)
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start, date: harness.start.addingTimeInterval(40 * day))
        #expect(try harness.use() == .prompt(5))
        let report = try harness.makeGate().status()
        #expect(report.record.latestClock == harness.start.addingTimeInterval(40 * day))
    }

    /// A clock pushed far ahead (before the release was seen) is pulled back by trusted time, so
    /// the grace ends when it should and not 30 days after 2076.
    @Test func trustedTimeBehindAFutureClockReplacesTheHighWaterMark() throws {
        let store = try HTTPSStoreOrigin()
        let harness = try GateHarness()
        harness.lookUp(at: store)
        harness.time.set(harness.start.addingTimeInterval(50 * 365 * day))
        try store.answer(version: "1.4.0", trackID: 42, date: harness.start)
        #expect(try harness.use() == .open)
        // The clock is right again; the release appears. Without trusted time it would be
        // "first seen" in 2076 (the high-water mark) and in grace for 50 years.
        harness.time.set(harness.start.addingTimeInterval(day))
        try store.answer(version: "1.5.0", trackID: 42, date: harness.start.addingTimeInterval(day))
        #expect(try harness.use() == .grace)
        let report = try harness.makeGate().status()
        #expect(report.record.firstSeen == harness.start.addingTimeInterval(day))
        // Offline with the clock right again: the grace ends 30 days after the trusted sighting.
        harness.settings.lookupURL = "http://127.0.0.1:1/lookup"
        harness.time.set(harness.start.addingTimeInterval(20 * day))
        #expect(try harness.use() == .grace)
        harness.time.set(harness.start.addingTimeInterval(32 * day))
        #expect(try harness.use() == .prompt(5))
    }
}

/// The clock behind at a first sighting with no trusted time (a plain-HTTP lookup): the version's
/// release date, later than that clock, shows the clock wrong, and is when it was first seen
/// (found by an attack: a sighting with the clock a year behind took that year's date as first
/// seen, and the grace was over before the version came out, for good).
@Suite struct GateClockBehindTests {
    @Test func aFirstSightingWithTheClockBehindTakesTheReleaseDate() throws {
        let day: TimeInterval = 86_400
        let harness = try GateHarness()
        try harness.serve("1.5.0", released: harness.start)
        harness.time.set(harness.start.addingTimeInterval(-365 * day))
        #expect(try harness.use() == .grace)
        #expect(try harness.makeGate().status().record.firstSeen == harness.start)
        harness.time.set(harness.start.addingTimeInterval(20 * day))  // the clock right again
        #expect(try harness.use() == .grace)
        harness.time.set(harness.start.addingTimeInterval(31 * day))
        #expect(try harness.use() == .prompt(5))
    }

    /// Not past the clock when the answer's time is trusted (HTTPS): a date later than it is the
    /// store's mistake, and buys no grace.
    @Test func aReleaseDateLaterThanTrustedTimeIsNotTaken() throws {
        let day: TimeInterval = 86_400
        let store = try HTTPSStoreOrigin()
        let harness = try GateHarness()
        harness.lookUp(at: store)
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start.addingTimeInterval(365 * day), date: harness.start)
        #expect(try harness.use() == .grace)
        #expect(try harness.makeGate().status().record.firstSeen == harness.start)
    }
}

/// Trusted time gives no use back (decided after attacks): a first version gave back the uses
/// counted while trusted time showed the grace still running (for a run offline with the clock 40
/// days ahead), and an answer a cache kept, its `Date` days old, then gave back uses rightly
/// spent; with the clock set back as well, every use, a closed gate included.
@Suite struct GateTrustedTimeRefundsNothingTests {
    let day: TimeInterval = 86_400

    /// An HTTPS store and a gate in the grace of version 1.5.0, released at the harness's start.
    func inTheGrace() throws -> (GateHarness, HTTPSStoreOrigin) {
        let store = try HTTPSStoreOrigin()
        let harness = try GateHarness()
        harness.lookUp(at: store)
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start, date: harness.start)
        #expect(try harness.use() == .grace)
        return (harness, store)
    }

    /// An HTTPS store and a gate three days past its grace, its first use asked for.
    func pastTheGrace() throws -> (GateHarness, HTTPSStoreOrigin) {
        let (harness, store) = try inTheGrace()
        harness.time.set(harness.start.addingTimeInterval(33 * day))
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start, date: harness.start.addingTimeInterval(33 * day))
        #expect(try harness.use() == .prompt(5))
        return (harness, store)
    }

    /// An answer a cache kept, its `Date` in the grace, with the clock right and with it set back.
    @Test(arguments: [false, true])
    func aStaleTrustedTimeGivesNothingBack(clockSetBack: Bool) throws {
        let (harness, store) = try pastTheGrace()
        #expect(try harness.use() == .prompt(4))
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start, date: harness.start.addingTimeInterval(29 * day))
        if clockSetBack { harness.time.set(harness.start.addingTimeInterval(29 * day)) }
        let report = try harness.makeGate().check()
        #expect(report.lookupError == nil)
        #expect(report.record.promptsShown == 2, "a stale answer gave back uses rightly spent")
    }

    /// A cache that says how long it kept the answer (`Age`, RFC 9111): the time is its `Date`
    /// plus that, so the clock set back gains nothing (found by the attack on the refund: the old
    /// `Date` pulled the gate's clock back four days, into the grace).
    @Test func aCachedAnswersAgeIsAddedToItsDate() throws {
        let (harness, store) = try pastTheGrace()
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start, date: harness.start.addingTimeInterval(32 * day), age: Int(day))
        harness.time.set(harness.start.addingTimeInterval(29 * day))  // the clock set back, into the grace
        let report = try harness.makeGate().check()
        #expect(report.lookupError == nil)
        #expect(report.record.latestClock == harness.start.addingTimeInterval(33 * day))
        #expect(try harness.use() == .prompt(4), "back in the grace")
    }

    /// An `Age` counts for a day at most (found by an attack: a cache saying it kept the answer a
    /// year, `Age: 31536000`, moved the gate's clock a year ahead, and an honest user in the grace
    /// was charged 25 days early). A store's answer is not kept for days by a cache that works.
    @Test func anAgeCountsForADayAtMost() throws {
        let (harness, store) = try inTheGrace()
        harness.time.set(harness.start.addingTimeInterval(10 * day))
        try store.answer(version: "1.5.0", trackID: 42, released: harness.start, date: harness.start.addingTimeInterval(10 * day), age: 31_536_000)
        let report = try harness.makeGate().check()
        #expect(report.lookupError == nil)
        #expect(report.record.latestClock == harness.start.addingTimeInterval(11 * day))
        #expect(try harness.use() == .grace, "a cache's word moved the clock past the grace")
    }
}

/// A store answer dated before there was an App Store (before 1970 in the attack that found it)
/// made a record `load` takes for tampered: the next run blamed the user, and once the store
/// answered as usual the recovery closed the gate with every use spent. Such a date is left out,
/// as a malformed one is, and a record that could not be read back is never written.
@Suite struct GateImplausibleDateTests {
    let day: TimeInterval = 86_400

    /// The store's answer with `releaseDate` as written, for the harness's app.
    func serve(_ harness: GateHarness, version: String, releaseDate: String) throws {
        try harness.root.write(
            "lookup.json",
            #"{"resultCount":1,"results":[{"trackId":42,"version":"\#(version)","trackViewUrl":"https://apps.example/mapgate","currentVersionReleaseDate":"\#(releaseDate)"}]}"#)
        harness.settings.lookupURL = harness.origin.baseURL + "/lookup.json"
    }

    @Test(arguments: ["1969-12-31T23:59:59Z", "1900-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "2008-07-09T23:59:59Z"])
    func aReleaseDateBeforeTheAppStoreCostsNoUse(_ releaseDate: String) throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        try serve(harness, version: "1.6.0", releaseDate: releaseDate)
        harness.time.advance(seconds: 3600)
        let gate = try harness.makeGate()
        let report = try gate.check()
        #expect(report.lookupError == nil)
        #expect(report.record.lastRelease?.version == "1.6.0")
        #expect(report.record.lastRelease?.releaseDate == nil)
        #expect(report.record.promptsShown == 1)
        // Read back by the next run as mapgate wrote it: no note of a record changed outside it.
        let next = try harness.makeGate()
        let status = try next.status()
        #expect(next.stateNotes.isEmpty, "\(next.stateNotes)")
        #expect(!status.record.isRecovering)
        try harness.serve("1.5.0")
        harness.time.advance(days: 2)
        #expect(try harness.use() == .prompt(4))
    }

    /// The App Store's own first day is a date an answer may carry.
    @Test func aReleaseDateOnTheAppStoresFirstDayIsKept() throws {
        let harness = try GateHarness()
        try serve(harness, version: "1.5.0", releaseDate: "2008-07-10T00:00:00Z")
        #expect(try harness.use() == .prompt(5))
        #expect(try harness.makeGate().status().record.lastRelease?.releaseDate == Date(timeIntervalSince1970: 1_215_648_000))
    }

    /// An HTTPS answer's `Date` before 1970 (a broken mirror's or proxy's clock) set the clock's
    /// high-water mark there: even a new user's first sync failed. It is not trusted now.
    @Test(arguments: ["Wed, 31 Dec 1969 23:00:00 GMT", "Sat, 01 Jan 2000 00:00:00 GMT"])
    func aDateHeaderBeforeTheAppStoreIsNotTrusted(_ header: String) throws {
        let store = try HTTPSStoreOrigin()
        let harness = try GateHarness()
        harness.lookUp(at: store)
        try store.answer(version: "1.5.0", trackID: 42, dateHeader: header)
        #expect(try harness.use() == .grace)
        let next = try harness.makeGate()
        let record = try next.status().record
        #expect(next.stateNotes.isEmpty, "\(next.stateNotes)")
        #expect(record.latestClock.map { $0 >= harness.start } ?? true)
        #expect(record.firstSeen == harness.start)
    }

    /// A clock before 1970 on a fresh record: the change is refused, nothing is written or
    /// counted, and the next run with the clock right starts as if it had not happened.
    @Test func aRecordThatCouldNotBeReadBackIsNeverWritten() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        harness.time.set(Date(timeIntervalSince1970: -86_400))
        let error = #expect(throws: GeneralFailure.self) { try harness.makeGate().authorizeUse() }
        #expect(error?.message.contains("before 1970") == true)
        harness.time.set(harness.start)
        let gate = try harness.makeGate()
        #expect(try gate.authorizeUse().decision == .notice(until: harness.start.addingTimeInterval(30 * day)))
        #expect(gate.stateNotes.isEmpty, "\(gate.stateNotes)")
    }
}
