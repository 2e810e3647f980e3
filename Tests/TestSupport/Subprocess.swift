import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The result of running a program to completion.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutData: Data
}

/// This process's environment with `additions` on top.
public func environmentWith(_ additions: [String: String]) -> [String: String] {
    ProcessInfo.processInfo.environment.merging(additions) { $1 }
}

/// Runs a program with arguments and environment additions, collecting its output.
public func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
    timeout: Double = 60
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environmentWith(environment)
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try startWithoutBlockedSignals(process)
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    // Read both pipes while the process runs so a full pipe never blocks it.
    nonisolated(unsafe) var outData = Data()
    nonisolated(unsafe) var errData = Data()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        outData = out.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    group.enter()
    DispatchQueue.global().async {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    if group.wait(timeout: .now() + timeout) == .timedOut {
        process.terminate()
        group.wait()
    }
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self), stdoutData: outData)
}

/// Starts `process` with no signal blocked. A child inherits the signal mask of the thread that
/// starts it, and the test runner's worker threads (libdispatch's) block most signals: children
/// started from them once ignored SIGTERM (the HTTPS store origin's python server), so each test
/// waited its full timeout and left orphans behind (issue 43). The calling thread's mask is set
/// empty for the start only, then put back.
///
/// Nor ignored (``terminatingSignalsAtTheirDefault``): a child keeps the signals its parent
/// ignores, and a test runner started under `nohup`, or as a script's background job, would start
/// every program with SIGHUP (or SIGINT and SIGQUIT) ignored, which mapgate keeps ignored as any
/// program does (the tests' SIGHUPs then did nothing).
public func startWithoutBlockedSignals(_ process: Process) throws {
    removeFaketimeLeftovers()
    _ = terminatingSignalsAtTheirDefault
    var empty = sigset_t()
    sigemptyset(&empty)
    var previous = sigset_t()
    pthread_sigmask(SIG_SETMASK, &empty, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    try process.run()
}

/// Removes what `faketime` wrappers that were killed left in /dev/shm: each wrapper makes a
/// semaphore and a shared memory object named by its PID (`sem.faketime_sem_PID`,
/// `faketime_shm_PID`) and removes them when its child ends, but not when it is killed itself
/// (a test's timeout, a SIGKILL to the whole tree). A later wrapper that gets the same PID then
/// fails with "sem_open: File exists" instead of running the test's command: with suites run
/// several at a time, thousands of processes a run made that happen every run or two (issue 43).
/// Called before each start; only the objects of PIDs that no longer run are removed.
public func removeFaketimeLeftovers() {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm") else { return }
    for name in names where name.hasPrefix("faketime_shm_") || name.hasPrefix("sem.faketime_sem_") {
        guard let pid = pid_t(name.split(separator: "_").last ?? ""), pid > 0 else { continue }
        if kill(pid, 0) == -1, errno == ESRCH { unlink("/dev/shm/" + name) }
    }
}

/// Puts back the default action of each terminating signal this process was started with
/// ignored, once: what its children inherit, as from a login shell.
private let terminatingSignalsAtTheirDefault: Void = {
    for number in [SIGHUP, SIGINT, SIGQUIT, SIGTERM] {
        let previous = signal(number, SIG_DFL)
        // Anything but "ignored" (a handler libdispatch or the runtime set) is put back as it was.
        if let previous, unsafeBitCast(previous, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self) { signal(number, previous) }
    }
}()
