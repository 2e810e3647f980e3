import Foundation
import Synchronization
import Testing

import MapGate
@testable import MapGateBase

/// The concurrency blocks the server and sync stand on (issue 28): a periodic worker that keeps to
/// real time and stops at once, and a background job whose value or error comes back.
@Suite struct PeriodicWorkerTests {
    /// Runs every interval on its own thread, made there once; stop wakes it from its wait at
    /// once (not after the interval) and no run starts afterwards.
    @Test func runsEveryIntervalOnItsThreadAndStopsAtOnce() throws {
        let runs = Atomic<Int>(0)
        let made = Atomic<Int>(0)
        let worker = PeriodicWorker(name: "test-worker", interval: 0.02, makeBody: {
            made.add(1, ordering: .relaxed)
            return { runs.add(1, ordering: .relaxed) }
        })
        try worker.start()
        try worker.start()  // a second start does nothing
        let deadline = Date().addingTimeInterval(10)
        while runs.load(ordering: .relaxed) < 5, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(runs.load(ordering: .relaxed) >= 5)
        #expect(made.load(ordering: .relaxed) == 1)
        worker.stop()
        let stopped = runs.load(ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(runs.load(ordering: .relaxed) == stopped, "a run after stop")
    }

    /// A long interval does not delay stop: the wait is woken through its pipe.
    @Test func stopDoesNotWaitForTheInterval() throws {
        let worker = PeriodicWorker(name: "test-slow", interval: 3600, body: {})
        try worker.start()
        let started = Date()
        worker.stop()
        #expect(Date().timeIntervalSince(started) < 5)
        worker.stop()  // twice is harmless
    }

    /// `hurry` runs the body without waiting for a long interval, once per hurry, and keeps to
    /// the interval after; a worker hurried many times before it reads never blocks the caller.
    @Test func hurryRunsTheBodyAtOnce() throws {
        let runs = Atomic<Int>(0)
        let worker = PeriodicWorker(name: "test-hurry", interval: 3600, body: { runs.add(1, ordering: .relaxed) })
        try worker.start()
        defer { worker.stop() }
        worker.hurry()
        let deadline = Date().addingTimeInterval(10)
        while runs.load(ordering: .relaxed) < 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(runs.load(ordering: .relaxed) == 1)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(runs.load(ordering: .relaxed) == 1, "ran again without a hurry")
        let started = Date()
        for _ in 0..<100_000 { worker.hurry() }  // more than a pipe holds
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// A body in progress finishes before stop returns.
    @Test func stopWaitsForARunInProgress() throws {
        let inside = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        let worker = PeriodicWorker(name: "test-busy", interval: 0.001, body: {
            inside.signal()
            Thread.sleep(forTimeInterval: 0.2)
            finished.store(true, ordering: .releasing)
        })
        try worker.start()
        inside.wait()
        worker.stop()
        let done = finished.load(ordering: .acquiring)
        #expect(done)
    }

    @Test func aBackgroundJobGivesItsValueOrItsError() throws {
        #expect(try BackgroundJob { 6 * 7 }.wait() == 42)
        let failing = BackgroundJob<Int> { throw GeneralFailure("broken on purpose", kind: .io) }
        let error = try #require(throws: GeneralFailure.self) { try failing.wait() }
        #expect(error.message == "broken on purpose" && error.kind == .io)
        // The job runs at once, on another thread, while the caller goes on.
        let gate = DispatchSemaphore(value: 0)
        let job = BackgroundJob<Bool> { gate.wait(timeout: .now() + 10) == .success }
        gate.signal()
        #expect(try job.wait())
    }
}
