import Foundation
import MapGate
import MapGateDemo
import TestSupport
import Testing

/// The version gate end to end: real state database, real lookups against the test origin,
/// an injected clock. Each step is one run of mapgate (a fresh `Gate`, as a new process has).
@Suite struct GateScenarioTests {
    enum Step: CustomStringConvertible {
        /// The store now reports this version (nil: the network is gone).
        case store(String?)
        case advance(days: Double)
        /// Sets the clock to this many days after the start (the user moves it back).
        case clockAt(days: Double)
        case use(Expected)
        case phase(Expected)

        var description: String {
            switch self {
            case .store(let version): "store \(version ?? "offline")"
            case .advance(let days): "advance \(days)d"
            case .clockAt(let days): "clock at day \(days)"
            case .use(let expected): "use → \(expected)"
            case .phase(let expected): "phase → \(expected)"
            }
        }
    }

    enum Expected: Equatable, CustomStringConvertible {
        case open, grace, prompt(Int), refused
        var description: String {
            switch self {
            case .open: "open"
            case .grace: "grace"
            case .prompt(let left): "prompt(\(left))"
            case .refused: "refused"
            }
        }
    }

    struct Scenario: CustomTestStringConvertible, Sendable {
        let name: String
        let steps: [Step]
        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "up to date: no prompt ever", steps: [
            .store("1.4.0"), .use(.open), .advance(days: 60), .use(.open), .phase(.open),
        ]),
        Scenario(name: "day 0: a newer version starts the grace period", steps: [
            .store("1.5.0"), .use(.grace), .phase(.grace),
        ]),
        Scenario(name: "day 29: still no prompt", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 29), .use(.grace), .advance(days: 0.99), .use(.grace),
        ]),
        Scenario(name: "day 30: first prompt, 5 left; fifth 1 left; sixth refused", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 30),
            .use(.prompt(5)), .use(.prompt(4)), .use(.prompt(3)), .use(.prompt(2)), .use(.prompt(1)),
            .use(.refused), .use(.refused), .phase(.refused),
        ]),
        // Issue 35: the App Store's lookup answers an older version for a day or more after a
        // release (its CDN cache): one such answer refunds nothing.
        Scenario(name: "one store answer that is not newer refunds nothing", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 31), .use(.prompt(5)), .use(.prompt(4)),
            .store("1.4.0"), .advance(days: 1), .use(.prompt(3)), .phase(.prompt(2)),
        ]),
        Scenario(name: "reset when the store says not newer again a day later", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 31), .use(.prompt(5)), .use(.prompt(4)),
            .store("1.4.0"), .advance(days: 1), .use(.prompt(3)), .advance(days: 1), .use(.open), .phase(.open),
            .store("1.6.0"), .advance(days: 1), .use(.grace), .advance(days: 30), .use(.prompt(5)),
        ]),
        Scenario(name: "a newer answer between two that are not cancels the reset", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 31), .use(.prompt(5)),
            .store("1.4.0"), .advance(days: 1), .use(.prompt(4)),
            .store("1.5.0"), .advance(days: 1), .use(.prompt(3)),
            .store("1.4.0"), .advance(days: 1), .use(.prompt(2)), .advance(days: 1), .use(.open),
        ]),
        Scenario(name: "a pulled release that is still newer keeps the count", steps: [
            .store("1.6.0"), .use(.grace), .advance(days: 31), .use(.prompt(5)),
            .store("1.5.0"), .advance(days: 1), .use(.prompt(4)),
        ]),
        Scenario(name: "offline after the grace period still counts", steps: [
            .store("1.5.0"), .use(.grace), .store(nil), .advance(days: 31), .use(.prompt(5)), .advance(days: 2),
            .use(.prompt(4)), .use(.prompt(3)),
        ]),
        Scenario(name: "offline while closed stays closed", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 30),
            .use(.prompt(5)), .use(.prompt(4)), .use(.prompt(3)), .use(.prompt(2)), .use(.prompt(1)),
            .store(nil), .advance(days: 3), .use(.refused), .phase(.refused),
        ]),
        Scenario(name: "the clock set back neither restarts the grace period nor gives uses back", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 31), .use(.prompt(5)),
            .clockAt(days: 0), .use(.prompt(4)), .clockAt(days: -400), .use(.prompt(3)), .phase(.prompt(2)),
        ]),
        Scenario(name: "the clock set back during the grace period does not extend it", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 20), .use(.grace), .clockAt(days: 5), .use(.grace),
            .clockAt(days: 30), .use(.prompt(5)),
        ]),
        Scenario(name: "a second newer version during the grace period keeps the first start", steps: [
            .store("1.5.0"), .use(.grace), .advance(days: 20), .store("1.6.0"), .use(.grace),
            .advance(days: 10), .use(.prompt(5)),
        ]),
        Scenario(name: "a lookup failure never closes an open gate", steps: [
            .store(nil), .use(.open), .advance(days: 90), .use(.open), .phase(.open),
        ]),
    ]

    @Test(arguments: scenarios)
    func scenario(_ scenario: Scenario) throws {
        let harness = try GateHarness()
        for (index, step) in scenario.steps.enumerated() {
            let context = Comment(rawValue: "step \(index + 1): \(step)")
            switch step {
            case .store(let version): try harness.serve(version)
            case .advance(let days): harness.time.advance(days: days)
            case .clockAt(let days): harness.time.set(harness.start.addingTimeInterval(days * 86_400))
            case .use(let expected):
                #expect(try harness.use() == expected, context)
            case .phase(let expected):
                #expect(try harness.phase() == expected, context)
            }
        }
    }

    @Test(arguments: [
        "itunes-lookup-empty.json", "itunes-lookup-invalid-id.json", "not-json", "status-503", "stall", "offline",
    ])
    func everyLookupFailureShapeLeavesTheStateAlone(failure: String) throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        #expect(try harness.use() == .grace)
        harness.time.advance(days: 31)
        #expect(try harness.use() == .prompt(5))
        let before = try harness.makeGate().status().record
        try harness.serveFailure(failure)
        harness.time.advance(days: 2)
        let report = try harness.makeGate().check()
        #expect(report.lookupError != nil)
        #expect(report.record.pendingVersion == before.pendingVersion)
        #expect(report.record.firstSeen == before.firstSeen)
        #expect(report.record.promptsShown == before.promptsShown)
        #expect(report.record.lastRelease == before.lastRelease)
        #expect(report.record.lastLookupError != nil)
        #expect(try harness.use() == .prompt(4))
    }

    @Test func updatingOpensTheGateAtOnceEvenOffline() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        _ = try harness.use()
        harness.time.advance(days: 30)
        for _ in 0..<5 { _ = try harness.use() }
        #expect(try harness.use() == .refused)
        try harness.serve(nil)
        let updated = try harness.makeGate(installed: "1.5.0")
        #expect(try updated.status().phase == .upToDate)
        #expect(try updated.authorizeUse().decision == .allowed)
        // and the record was reset for good: the old binary would start afresh too.
        #expect(try updated.status().record.promptsShown == 0)
    }

    /// A store answer a release behind (a cache; found by an attack) does not lower the version
    /// required: installing that older version does not clear the count and start a new grace.
    @Test func anOlderStoreAnswerDoesNotLowerTheRequiredVersion() throws {
        let harness = try GateHarness()
        try harness.serve("1.6.0")
        _ = try harness.use()
        harness.time.advance(days: 30)
        for _ in 0..<3 { _ = try harness.use() }
        try harness.serve("1.5.0")
        let checked = try harness.makeGate().check()
        #expect(checked.record.pendingVersion == "1.6.0")
        #expect(checked.record.promptsShown == 3)
        // The older version installed: still one behind, the count and the grace as they were.
        let older = try harness.makeGate(installed: "1.5.0").status()
        #expect(older.record.pendingVersion == "1.6.0" && older.record.promptsShown == 3, "\(older.record)")
        #expect(older.phase == .prompting(usesLeft: 2))
    }

    @Test func ordinaryRunsLookUpAtMostOncePerInterval() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        for _ in 0..<5 {
            _ = try harness.use()
            harness.time.advance(seconds: 3600)
        }
        #expect(harness.lookups == 1)
        harness.time.advance(days: 1)
        _ = try harness.use()
        #expect(harness.lookups == 2)
        _ = try harness.makeGate().check()
        _ = try harness.makeGate().check()
        #expect(harness.lookups == 4)  // check always looks up
    }

    @Test func closedGateThrowsWithVersionAndStoreURL() throws {
        let harness = try GateHarness(maxPrompts: 0)
        try harness.serve("1.5.0")
        _ = try harness.use()
        harness.time.advance(days: 30)
        let error = #expect(throws: GateClosedError.self) { try harness.makeGate().authorizeUse() }
        #expect(error?.requiredVersion == "1.5.0")
        #expect(error?.storeURL == "https://apps.example/mapgate")
        #expect(error?.kind == .updateRequired)
    }

    @Test func twoWritersCountingAtOnceNeverLoseAUse() throws {
        let harness = try GateHarness(maxPrompts: 1000)
        try harness.serve("1.5.0")
        _ = try harness.use()
        harness.time.advance(days: 31)
        let perThread = 40
        let failures = DispatchQueue(label: "failures")
        nonisolated(unsafe) var errors: [String] = []
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            do {
                // Each thread is its own "process": its own connection to the state database.
                let gate = try harness.makeGate()
                for _ in 0..<perThread { _ = try gate.authorizeUse() }
            } catch {
                failures.sync { errors.append("\(error)") }
            }
        }
        #expect(errors.isEmpty)
        #expect(try harness.makeGate().status().record.promptsShown == 2 * perThread)
    }

    @Test func damagedStateDatabaseIsMovedAsideAndRestoredFromTheOtherCopy() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        _ = try harness.use()
        let path = harness.directory.statePath
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        let gate = try harness.makeGate()
        let report = try gate.status()
        #expect(gate.stateNotes.contains { $0.contains("damaged") })
        // The copy in the state folder still holds the record, and decides: nothing was lost,
        // as when a data directory is new (found by an attack: the gate recovered, and with a
        // newer version out a month it closed on an honest user with uses left).
        #expect(report.record.pendingVersion == "1.5.0")
        #expect(!report.record.isRecovering, "\(gate.stateNotes)")
        let moved = try FileManager.default.contentsOfDirectory(atPath: harness.directory.path)
            .filter { $0.hasPrefix("state.sqlite.damaged-") }
        #expect(moved.count == 1)
    }

    /// The user's copy found damaged is lost state (the data directory's may be an old one,
    /// another `--data-dir`): the record recovers.
    @Test func aDamagedUsersCopyIsLostState() throws {
        let harness = try GateHarness()
        try harness.serve("1.5.0")
        _ = try harness.use()
        let path = harness.stateFolder + "/state.sqlite"
        #expect(FileManager.default.fileExists(atPath: path))
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        let gate = try harness.makeGate()
        #expect(try gate.status().record.isRecovering, "\(gate.stateNotes)")
    }
}

/// A data directory, an origin serving `lookup.json`, and a clock that moves only when told.
final class GateHarness: @unchecked Sendable {
    // Set once in init; the tests drive it from one thread except where noted.
    let root: TemporaryDirectory
    let origin: TestOrigin
    let directory: DataDirectory
    let start = Date(timeIntervalSince1970: 1_790_000_000)
    let time: ManualTime
    var settings = GateSettings(appID: 42)
    var stateFolder: String { root.path + "/state" }

    init(maxPrompts: Int = 5, closeAfterDays: Int? = nil) throws {
        root = try TemporaryDirectory()
        origin = try TestOrigin(root: root.path)
        directory = DataDirectory(path: root.path + "/data")
        time = ManualTime(start)
        settings.maxPrompts = maxPrompts
        settings.closeAfterDays = closeAfterDays
    }

    var lookups: Int { origin.requests.filter { $0.path.hasPrefix("/lookup") || $0.path.contains(".json") }.count }

    /// Looks the store up at `store`, over HTTPS with its certificate: answers with trusted time.
    func lookUp(at store: HTTPSStoreOrigin) {
        settings.lookupURL = store.lookupURL
        settings.lookupCAFile = store.certificate
    }

    /// The store reports `version` (nil: the network is gone), released at `released` if given.
    func serve(_ version: String?, released: Date? = nil, trackID: Int = 42) throws {
        guard let version else {
            settings.lookupURL = "http://127.0.0.1:1/lookup"
            return
        }
        let date = released.map { #","currentVersionReleaseDate":"\#(ISODate.string($0))""# } ?? ""
        try root.write(
            "lookup.json",
            #"{"resultCount":1,"results":[{"trackId":\#(trackID),"version":"\#(version)","trackViewUrl":"https://apps.example/mapgate","releaseNotes":"Notes"\#(date)}]}"#)
        settings.lookupURL = origin.baseURL + "/lookup.json"
        // A new answer is picked up by the next lookup that is due.
    }

    func serveFailure(_ kind: String) throws {
        switch kind {
        case "not-json":
            try root.write("broken.json", "<html>")
            settings.lookupURL = origin.baseURL + "/broken.json"
        case "status-503": settings.lookupURL = origin.baseURL + "/_fault/status=503/lookup.json"
        case "stall": settings.lookupURL = origin.baseURL + "/_fault/stall=12/lookup.json"
        case "offline": settings.lookupURL = "http://127.0.0.1:1/lookup"
        default:
            try FileManager.default.copyItem(atPath: try TestPaths.shared("lookup/" + kind), toPath: root.file("shared-" + kind))
            settings.lookupURL = origin.baseURL + "/shared-" + kind
        }
    }

    func makeStore() throws -> GateStore {
        try GateStore(stateFolder: stateFolder, directory: directory, clock: time.clock)
    }

    func makeGate(installed: String = "1.4.0") throws -> Gate {
        Gate(store: try makeStore(), settings: settings, clock: time.clock, installed: try AppVersion(installed))
    }

    func use() throws -> GateScenarioTests.Expected {
        do {
            switch try makeGate().authorizeUse().decision {
            case .allowed: return .open
            case .notice: return .grace
            case .prompt(let left): return .prompt(left)
            case .refused: return .refused
            }
        } catch is GateClosedError {
            return .refused
        }
    }

    func phase() throws -> GateScenarioTests.Expected {
        switch try makeGate().status().phase {
        case .upToDate: .open
        case .grace: .grace
        case .prompting(let left): .prompt(left)
        case .closed: .refused
        }
    }
}
