import CLinux
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// A thread that runs a body every `interval` seconds of real elapsed time until stopped.
///
/// It waits with the kernel's own timer (``MonotonicClock``, `ppoll` made as a system call), so a
/// clock set, sped up, slowed down or frozen by the user or a preloaded library neither delays nor
/// hurries it. `stop` wakes it at once and waits for a body in progress to finish; `hurry` runs the
/// body at once instead of at the end of the interval.
///
/// What the body keeps between runs can be made on the thread itself (``init(name:interval:makeBody:)``):
/// state that is not `Sendable` then stays there, and the compiler sees that it does.
public final class PeriodicWorker: Sendable {
    private let name: String
    private let interval: Double
    private let makeBody: @Sendable () -> () -> Void
    /// The pipe `stop` and `hurry` write to: [read end, write end].
    private let wakeup: [Int32]
    private let stopping = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - interval: seconds between the end of one run of `body` and the start of the next.
    public convenience init(name: String, interval: Double, body: @escaping @Sendable () -> Void) {
        self.init(name: name, interval: interval, makeBody: { body })
    }

    /// - Parameters:
    ///   - interval: seconds between the end of one run of the body and the start of the next.
    ///   - makeBody: runs once on the worker's thread when it starts, before the first interval;
    ///     the body it returns runs every interval on that thread, and nowhere else.
    public init(name: String, interval: Double, makeBody: @escaping @Sendable () -> () -> Void) {
        self.name = name
        self.interval = max(interval, 0.001)
        self.makeBody = makeBody
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // Never blocks a caller: a full pipe wakes the worker all the same.
            _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        }
        wakeup = fds
    }

    deinit {
        for fd in wakeup where fd >= 0 { close(fd) }
    }

    /// Starts the thread (once); throws ``Threads/StartError`` when it cannot be started.
    public func start() throws {
        guard started.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged else { return }
        do {
            try Threads.detach(name: name) { [self] in
                defer { finished.signal() }
                let body = makeBody()
                while waitForNextRun() { body() }
            }
        } catch {
            started.store(false, ordering: .releasing)
            throw error
        }
    }

    /// Stops the thread and waits for it; a body in progress finishes first.
    public func stop() {
        guard stopping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged else { return }
        if wakeup[1] >= 0 {
            var byte: UInt8 = 1
            _ = write(wakeup[1], &byte, 1)
        }
        if started.load(ordering: .acquiring) { finished.wait() }
    }

    /// Runs the body as soon as a run in progress ends, without waiting for the interval.
    public func hurry() {
        guard wakeup[1] >= 0 else { return }
        var byte: UInt8 = 0
        _ = write(wakeup[1], &byte, 1)
    }

    /// Waits one interval of real time, or until hurried; false once stopped.
    private func waitForNextRun() -> Bool {
        let deadline = MonotonicClock.nanoseconds + UInt64(interval * 1e9)
        while !stopping.load(ordering: .acquiring) {
            let now = MonotonicClock.nanoseconds
            guard now < deadline else { return true }
            var poll = pollfd(fd: wakeup[0], events: Int16(POLLIN), revents: 0)
            if clinux_ppoll(&poll, 1, Int64(deadline - now)) > 0 {
                if stopping.load(ordering: .acquiring) { return false }
                var byte: UInt8 = 0
                _ = read(wakeup[0], &byte, 1)  // one hurry taken: a byte is there to read
                return true
            }
        }
        return false
    }
}
