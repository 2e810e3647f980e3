import Foundation

/// A long-running subprocess (`mapgate serve`): read its first output line, signal it, wait.
public final class BackgroundProcess: @unchecked Sendable {
    // `output` and `errors` are guarded by `lock`; the rest is set once.
    private let process = Process()
    private let lock = NSLock()
    private var output = Data()
    private var errors = Data()
    /// Left by each pipe's reader at the pipe's end.
    private let pipesOpen = DispatchGroup()

    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environmentWith(environment)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // One reader per pipe until its end: `wait` then knows every byte has arrived. Each on a
        // thread of its own: blocked readers on Dispatch's shared pool made later processes'
        // output wait seconds for a thread (the pool grows slowly on two cores).
        for (pipe, isOutput) in [(out, true), (err, false)] {
            pipesOpen.enter()
            Thread { [weak self] in
                let handle = pipe.fileHandleForReading
                while case let data = handle.availableData, !data.isEmpty {
                    self?.lock.withLock { if isOutput { self?.output.append(data) } else { self?.errors.append(data) } }
                }
                self?.pipesOpen.leave()
            }.start()
        }
        try startWithoutBlockedSignals(process)
    }

    deinit {
        stop()
    }

    /// Ends the process (and its children): SIGTERM, then SIGKILL if it has not ended within
    /// `grace` seconds, and waits for it. Leaves no orphan behind.
    public func stop(grace: Double = 5) {
        guard process.isRunning else { return }
        signal(SIGTERM)
        if wait(timeout: grace) == nil {
            signal(SIGKILL)
            _ = wait(timeout: grace)
        }
    }

    /// Whether it still runs.
    public var isRunning: Bool { process.isRunning }

    /// The process's id (of `faketime` when the run is wrapped in it).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Its resident memory now (`VmRSS`), in bytes; nil once it is gone.
    public var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    public var stdout: String { lock.withLock { String(decoding: output, as: UTF8.self) } }
    public var stdoutData: Data { lock.withLock { output } }
    public var stderr: String { lock.withLock { String(decoding: errors, as: UTF8.self) } }

    /// Waits until stdout holds a whole line, and returns the first one.
    public func firstLine(timeout: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = stdout
            if let newline = text.firstIndex(of: "\n") { return String(text[..<newline]) }
            if !process.isRunning { return nil }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    /// Signals the program: the process, or, when it is a wrapper that runs the program as its
    /// child (`faketime`), the child only; the wrapper then ends with the child's status, as a
    /// user's signal to the program would have it. SIGKILL goes to both.
    public func signal(_ number: Int32) {
        let pid = process.processIdentifier
        let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0) }
        for child in children { kill(child, number) }
        if children.isEmpty || number == SIGKILL { kill(pid, number) }
    }

    /// Waits for the process to end; nil if it is still running after `timeout`.
    public func wait(timeout: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { return nil }
        // Both pipes closed: all the output is read (a child that kept one open gets the rest of the timeout).
        _ = pipesOpen.wait(timeout: .now() + max(0.1, deadline.timeIntervalSinceNow))
        return process.terminationStatus
    }

    /// The first process at or under this one whose name is `name` (mapgate's own process under a
    /// `faketime` or `setpriv` wrapper), waited for up to 10 s.
    public func descendant(named name: String) throws -> pid_t {
        var pending = [processIdentifier]
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            var next: [pid_t] = []
            for pid in pending {
                let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                if comm == name { return pid }
                let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
                next += children.split(separator: " ").compactMap { pid_t($0) }
            }
            pending = next.isEmpty ? [processIdentifier] : next
            if next.isEmpty { usleep(20_000) }
        }
        throw MissingFixture(path: "a \(name) process under \(processIdentifier)")
    }
}
