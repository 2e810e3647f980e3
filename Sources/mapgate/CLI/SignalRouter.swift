import Dispatch
import FoundationEssentials
import MapGate
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The signals that end a run (SIGINT, SIGTERM, SIGHUP, SIGQUIT), taken in one place.
///
/// ``install()`` blocks them in the main thread before any other thread exists, so every thread
/// mapgate or a library starts inherits the mask: a signal sent to one of those threads
/// (`tgkill`) stays pending there and does nothing, and one sent to the process is taken by the
/// router's own thread (`sigwait`), which alone decides what it does:
/// - SIGHUP calls the hang-up handler a running server registered (a reload), unless the terminal
///   the run started on has hung up; without one, or then, it ends the run like the others (a
///   closed terminal or a dropped ssh connection);
/// - a ``wait(onHangUp:)`` under way (a server running until Ctrl-C) is woken, and the main
///   thread stops the server in order;
/// - otherwise the run ends: the registered cleanups run, newest first (a sync's half-assembled
///   files removed, the gate's reserved use given back unless delivered), and the process exits
///   with 128 + the signal, as a shell reports a process a signal ended; output the user already
///   has in part is written to its end first, and the run then ends as it would have
///   (``finishingOutput(console:_:)``).
///
/// Once the router has begun to end the run, the main thread cannot exit under it
/// (``exit(_:)`` waits), so a give-back in progress is never cut short.
enum SignalRouter {
    static let terminating: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    /// What the router's thread takes: the terminating signals, and job control's stop (Ctrl-Z)
    /// and continue, which a command the system service runs must follow too (found by an
    /// attack: stopped with Ctrl-Z at the question, the user's process left the service's command
    /// reading the terminal, and the next line typed at the shell answered it and spent a use).
    static let routed: [Int32] = terminating + [SIGTSTP, SIGCONT]

    /// A cleanup, run on the router's thread before the process ends on a signal.
    typealias Cleanup = @Sendable (_ signal: Int32) -> Void

    private struct Handlers: Sendable {
        var cleanups: [(id: Int, run: Cleanup, again: Bool)] = []
        var nextID = 0
        var waiter: (@Sendable (Int32) -> Void)?
        var hangUp: (@Sendable () -> Void)?
        var forwarder: (@Sendable (Int32) -> Void)?
    }

    private static let handlers = Locked(Handlers())
    /// The standard streams that were terminals when the run started, and whether it had a
    /// controlling terminal then (``install()``).
    private static let terminals = Locked<(streams: [Int32], controlling: Bool)>(([], false))
    /// Taken for good by whoever ends the process first: the router on a signal, or ``exit(_:)``.
    private static let ending = DispatchSemaphore(value: 1)

    /// Waits (at most 10 s) until no database call of this process is under way
    /// (``SQLiteDatabase/callsUnderWay``); true when a SIGCONT came meanwhile, or is waiting to
    /// be taken (taken here).
    private static func continuedWhileDatabaseCallsEnd() -> Bool {
        var continued = sigset_t()
        sigemptyset(&continued)
        sigaddset(&continued, SIGCONT)
        let deadline = ContinuousClock.now + .seconds(10)
        while SQLiteDatabase.callsUnderWay.load(ordering: .sequentiallyConsistent) > 0, ContinuousClock.now < deadline {
            var millisecond = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            if sigtimedwait(&continued, nil, &millisecond) == SIGCONT { return true }
        }
        // And one that came just now, with no call to wait for (found by an attack: a continue
        // sent within a millisecond of the stop left the command stopped for good).
        var now = timespec(tv_sec: 0, tv_nsec: 0)
        return sigtimedwait(&continued, nil, &now) == SIGCONT
    }

    /// Whether this run is a command the system service runs for a user (``SystemService``
    /// names the caller's process to it): its Ctrl-Z comes from the service.
    private static let isServiceCommand = getenv(SystemService.Settings.callerProcessVariable) != nil

    /// How many times the run was continued (SIGCONT) after a stop: a question waiting for its
    /// answer shows itself again (``TerminalInput/line(until:onContinue:)``).
    static let continuations = Atomic<Int>(0)
    /// How many times the run stopped itself for Ctrl-Z (SIGTSTP): the shell has then put the
    /// cursor on a line of its own by the time the run continues.
    static let stops = Atomic<Int>(0)

    /// The signals the router takes (``routed``, but for those ``ignoredAtStart``) as a set.
    static var signalSet: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        let ignored = ignoredAtStart.withLock { $0 }
        for number in routed where !ignored.contains(number) { sigaddset(&set, number) }
        return set
    }

    /// The routed signals this run was started with ignored (``install()``): `nohup` ignores
    /// SIGHUP, and a shell ignores SIGINT and SIGQUIT for a script's background job (`cmd &`).
    /// They stay ignored, as they would for any program: the router never blocks them, since a
    /// blocked signal is kept for `sigwait` even when ignored (found by an attack: `nohup mapgate
    /// serve &` stopped when its terminal closed, and starting it again cost a use). SIGCONT is
    /// never ignored: a stopped run continues whatever its action.
    private static let ignoredAtStart = Locked<[Int32]>([])

    /// Whether `number`'s action is to be ignored.
    private static func isIgnored(_ number: Int32) -> Bool {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0, let handler = action.__sigaction_handler.sa_handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Blocks the terminating signals in this (the main) thread and starts the router's thread.
    /// Call it first in `main`, before anything starts a thread.
    static func install() {
        let controlling = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        if controlling >= 0 { close(controlling) }
        terminals.withLock { $0 = ((0...2).filter { isatty($0) == 1 }, controlling >= 0) }
        ignoredAtStart.withLock { $0 = routed.filter { $0 != SIGCONT && isIgnored($0) } }
        var set = signalSet
        pthread_sigmask(SIG_BLOCK, &set, nil)
        do {
            try Threads.detach(name: "signals") {
                var set = signalSet
                while true {
                    var number: Int32 = 0
                    guard sigwait(&set, &number) == 0 else { continue }
                    route(number)
                }
            }
        } catch {
            // Without the thread the signals would stay blocked for ever: give them back their
            // default action (the run ends at once, as before any of this).
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
        }
    }

    private static func route(_ number: Int32) {
        if number == SIGTSTP || number == SIGCONT {
            // Ctrl-Z where no shell could continue the run (started straight on a terminal of its
            // own: `ssh -t host mapgate …`, `tmux new 'mapgate …'`) does nothing, as the kernel
            // does with SIGTSTP's default action there (found by an attack: the SIGSTOP below
            // stopped it for good, holding its use).
            // (The system service's command stops when its caller does: the service passes it
            // the caller's Ctrl-Z, and no shell of its own could continue it.)
            if number == SIGTSTP, !isServiceCommand, isOrphanedProcessGroup() { return }
            if number == SIGCONT { continuations.add(1, ordering: .relaxed) }
            // Job control: told to the system service's command first (it stops or goes on with
            // this process), then this process stops as Ctrl-Z has always stopped it.
            handlers.withLock({ $0.forwarder })?(number)
            if number == SIGTSTP {
                // Never with a database's lock held: other processes (every user's, in system
                // mode) would wait on it for as long as this one stays stopped. A continue that
                // comes meanwhile (`fg`) calls the stop off: after it, a stop would be for good.
                // No call begins from the look until the process goes on (``SQLiteDatabase/stopping``).
                SQLiteDatabase.stopping.store(true, ordering: .sequentiallyConsistent)
                defer { SQLiteDatabase.stopping.store(false, ordering: .sequentiallyConsistent) }
                if continuedWhileDatabaseCallsEnd() {
                    continuations.add(1, ordering: .relaxed)
                    handlers.withLock({ $0.forwarder })?(SIGCONT)
                    return
                }
                stops.add(1, ordering: .relaxed)
                kill(getpid(), SIGSTOP)
            }
            return
        }
        if let forwarder = handlers.withLock({ $0.forwarder }) {
            forwarder(number)
            return
        }
        let (waiter, hangUp) = handlers.withLock { handlers -> ((@Sendable (Int32) -> Void)?, (@Sendable () -> Void)?) in
            if number == SIGHUP, let hangUp = handlers.hangUp, !terminalHungUp() { return (nil, hangUp) }
            defer { handlers.waiter = nil }
            return (handlers.waiter, nil)
        }
        if let hangUp {
            hangUp()
            return
        }
        if let waiter {
            waiter(number)
            return
        }
        ending.wait()  // given back only when the run's output is complete (below): else the process ends here
        isStopping.store(true, ordering: .releasing)
        let cleanups = handlers.withLock { $0.cleanups }
        for cleanup in cleanups.reversed() { cleanup.run(number) }
        if deliveredOutputFinished(after: number) {
            // The run's work is done: it ends as it would have, with its own code (a record that
            // could not be saved, a summary that could not be written), unless it does not end
            // within 5 s (a summary waiting for a full pipe): then with 0.
            isStopping.store(false, ordering: .releasing)
            ending.signal()
            sleep(5)
            _exit(ExitCode.success)
        }
        // The main thread went on while the cleanups ran (a use given back waits for the state
        // database): what it made meanwhile goes too (found by a review: a sync stopped just
        // before it copied the installed file for a delta left the copy in `partial/`, hundreds of
        // megabytes, until the next sync).
        for cleanup in cleanups.reversed() where cleanup.again { cleanup.run(number) }
        _exit(128 + number)  // at once: no atexit handlers while other threads still run
    }

    /// Whether a signal is ending the run: what fails on the main thread meanwhile fails because
    /// the run is being stopped under it (the file it was assembling removed, its use given
    /// back), and is not said as an error of its own (``Console/error(_:)``; found by an attack:
    /// Ctrl-C during a sync's install said the new file "cannot be moved into place: no such
    /// file", while the installed region was untouched).
    static let isStopping = Atomic<Bool>(false)

    /// Where the output of ``finishingOutput(console:_:)`` stands.
    private enum Output {
        case none
        case writing(delivered: Bool, console: Console)
        case complete
    }

    private static let output = Locked<Output>(.none)
    /// The bytes written so far of output under ``finishingOutput(console:_:)`` (its writers add
    /// to it): a signal waits for the rest while it grows.
    static let outputWritten = Atomic<Int>(0)

    /// Said when a signal has waited a second for output already delivered.
    static var finishingNote: String {
        Localization.localized("stopping once the output already begun is written (its use is counted); press Ctrl-C again to stop now")
    }

    /// Runs `body`, which writes the run's output and calls `delivered` once its first byte is
    /// the user's (the gate's use counted for it). A signal that ends the run after that lets the
    /// rest be written first, and the run then ends as it would have, its work done: the use was
    /// paid for the whole output (found by an attack: Ctrl-C as the system service's command
    /// finished a tile it had written, the use counted, ended it with 130, and the user's process
    /// threw the tile away). The wait ends when the output is written, fails, or stops growing for
    /// 10 seconds (a reader that takes nothing; its writers write a pipe or a device in pieces of
    /// ``OutputDestination/piece(for:)`` bytes, so that a slow reader is seen to take them), or at
    /// a second signal (``deliveredOutputFinished(after:)``). ``finishingNote`` is said on
    /// `console` when the wait has lasted a second. A signal after `body` returned lets the run
    /// end with its own code too.
    static func finishingOutput<Result>(console: Console, _ body: (_ delivered: () -> Void) throws -> Result) rethrows -> Result {
        output.withLock { $0 = .writing(delivered: false, console: console) }
        do {
            let result = try body {
                output.withLock { state in
                    if case .writing(_, let console) = state { state = .writing(delivered: true, console: console) }
                }
            }
            output.withLock { $0 = .complete }
            return result
        } catch {
            output.withLock { $0 = .none }
            throw error
        }
    }

    /// Whether the run's delivered output is written in full (``finishingOutput(console:_:)``),
    /// waiting for it as that says, after `first`. On the router's thread, after the cleanups (a
    /// delivery under way has then been decided). A second signal ends the wait unless it is a
    /// SIGHUP (the terminal that would say so is gone) or came within 0.3 s of the first (found
    /// by an attack: a closed terminal sends SIGHUP twice, from the shell and from the kernel, and
    /// `timeout` sends SIGTERM to the run and then to its group; each was taken for the user
    /// pressing Ctrl-C again, and cut the output).
    private static func deliveredOutputFinished(after first: Int32) -> Bool {
        let started = ContinuousClock.now
        var grown = started
        var written = outputWritten.load(ordering: .relaxed)
        var noted = false
        var set = sigset_t()
        sigemptyset(&set)
        for number in terminating { sigaddset(&set, number) }
        while true {
            switch output.withLock({ $0 }) {
            case .complete: return true
            case .none, .writing(delivered: false, _): return false
            case .writing(delivered: true, let console):
                if !noted, ContinuousClock.now - started > .seconds(1) {
                    console.note(finishingNote, until: ContinuousClock.now + .seconds(1))
                    noted = true
                }
            }
            var tenth = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            let again = sigtimedwait(&set, nil, &tenth)
            if again > 0, again != SIGHUP, ContinuousClock.now - started > .milliseconds(300) { return false }
            let now = outputWritten.load(ordering: .relaxed)
            if now != written {
                written = now
                grown = ContinuousClock.now
            } else if ContinuousClock.now - grown > .seconds(10) {
                return false
            }
        }
    }

    /// Whether this process's group is orphaned (POSIX): no member of it has a parent outside it
    /// but in its session, so no shell's `fg` can continue it once stopped. Every member is looked
    /// at in `/proc` (not only this process's parents: in `sh -c 'mapgate … &' | cat` under a
    /// shell, mapgate's parent is gone but `cat`'s is the shell; found by an attack). Not orphaned
    /// when `/proc` cannot tell (not mounted, or another PID namespace's, where this process is
    /// not found under its own pid).
    static func isOrphanedProcessGroup() -> Bool {
        let group = getpgrp()
        let session = getsid(0)
        guard processGroupAndSession(of: getpid())?.group == group,
            let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc")
        else { return false }
        for name in names {
            guard let pid = pid_t(name), let member = processGroupAndSession(of: pid), member.group == group else { continue }
            guard member.parent > 0, let parent = processGroupAndSession(of: member.parent) else { continue }
            if parent.group != group && parent.session == session { return false }
        }
        return true
    }

    /// The parent, process group and session of `pid` (`/proc/PID/stat`'s fields 4 to 6).
    private static func processGroupAndSession(of pid: pid_t) -> (parent: pid_t, group: pid_t, session: pid_t)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"), let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = data[data.index(after: close)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 3, let parent = pid_t(String(decoding: fields[1], as: UTF8.self)),
            let group = pid_t(String(decoding: fields[2], as: UTF8.self)), let session = pid_t(String(decoding: fields[3], as: UTF8.self))
        else { return nil }
        return (parent, group, session)
    }

    /// Whether the terminal the run started on has hung up (its window closed, its ssh connection
    /// dropped): a stream of it then answers every call with EIO. A SIGHUP from it is the end of
    /// the run, not a reload: a server started at a terminal that then closed served on without
    /// one, holding its use, and the next tile from a tab left open spent it (found by an attack).
    /// The controlling terminal counts too, when no stream is on it (`serve < /dev/null > log
    /// 2>&1` at a terminal; found by an attack): it can no longer be opened, or answers EIO. A
    /// SIGHUP sent while the terminal is there (`kill -HUP`), or to a server that never had one (a
    /// service), reloads.
    private static func terminalHungUp() -> Bool {
        let (streams, controlling) = terminals.withLock { $0 }
        func isHungUp(_ descriptor: Int32) -> Bool {
            var settings = termios()
            return tcgetattr(descriptor, &settings) != 0 && errno == EIO
        }
        if streams.contains(where: isHungUp) { return true }
        guard controlling else { return false }
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return errno == ENXIO || errno == EIO }
        defer { close(descriptor) }
        return isHungUp(descriptor)
    }

    /// Runs `cleanup` if a signal ends the run while the returned registration lives; with
    /// `again`, once more just before the process ends (a removal of files the main thread may
    /// still be making).
    static func onSignal(again: Bool = false, _ cleanup: @escaping Cleanup) -> Registration {
        let id = handlers.withLock { handlers -> Int in
            handlers.nextID += 1
            handlers.cleanups.append((handlers.nextID, cleanup, again))
            return handlers.nextID
        }
        return Registration(id: id)
    }

    /// A cleanup's registration: dropping it unregisters the cleanup.
    final class Registration: Sendable {
        let id: Int
        init(id: Int) { self.id = id }
        deinit {
            let id = id
            // The cleanup is let go of after the lock: what it holds may unregister cleanups of its
            // own as it goes (found by the package's walkthrough: a sync's cleanup held the run's
            // use, whose own registration then waited on this lock for ever, in release builds).
            let removed = SignalRouter.handlers.withLock { handlers -> [(id: Int, run: Cleanup, again: Bool)] in
                let removed = handlers.cleanups.filter { $0.id == id }
                handlers.cleanups.removeAll { $0.id == id }
                return removed
            }
            withExtendedLifetime(removed) {}
        }
    }

    /// Blocks until SIGINT, SIGTERM or SIGQUIT (or SIGHUP without `onHangUp`), calling `onHangUp`
    /// (on the router's thread) for each SIGHUP: a server running until Ctrl-C, or until the
    /// service manager stops it, that reloads on SIGHUP as daemons do. A second signal while the
    /// caller stops in order ends the run at once (with the cleanups).
    ///
    /// - Parameter announce: runs once the signals are taken here (the server's "serving at"
    ///   line): whoever reads it and then sends SIGTERM gets the orderly stop, never the
    ///   run-ending default of the moments before.
    @discardableResult
    static func wait(onHangUp: (@Sendable () -> Void)? = nil, announcing announce: () -> Void = {}) -> Int32 {
        let done = DispatchSemaphore(value: 0)
        let received = Locked<Int32>(0)
        handlers.withLock { handlers in
            handlers.waiter = { number in
                received.withLock { $0 = number }
                done.signal()
            }
            handlers.hangUp = onHangUp
        }
        announce()
        done.wait()
        handlers.withLock { $0.hangUp = nil }
        return received.withLock { $0 }
    }

    /// Runs `body` with every terminating signal handed to `forward` (on the router's thread)
    /// instead of ending the run: a command the system service runs, which gets the signal and
    /// ends (or reloads) as it would here (``SystemRelay``).
    static func forwarding<Result>(to forward: @escaping @Sendable (Int32) -> Void, _ body: () throws -> Result) rethrows -> Result {
        handlers.withLock { $0.forwarder = forward }
        defer { handlers.withLock { $0.forwarder = nil } }
        return try body()
    }

    /// Ends the process with `code`, unless a signal is already ending it (then this waits for that).
    static func exit(_ code: Int32) -> Never {
        ending.wait()
        Glibc.exit(code)
    }
}
