import Foundation

/// Runs a program on a pseudo-terminal of its own (Python's `pty`), as a user at a terminal
/// would: it waits for text to appear on the screen, then types (or presses Ctrl-C, `"\u{03}"`;
/// Ctrl-D, `"\u{04}"`), step by step, so that a keystroke comes at the moment it is meant to, not
/// before the program asks. The terminal's line discipline turns Ctrl-C into SIGINT for the
/// program's process group, as a real terminal does.
public enum TerminalSession {
    /// One step: wait until the screen shows `waitFor` (nil: do not wait), then type `send`; or,
    /// with `hangsUp`, close the terminal (as a closed window or a dropped ssh connection does:
    /// the program gets SIGHUP and its terminal answers no more), after which the program has 15 s
    /// to end by itself (else it is killed and the result says `timedOut`).
    public struct Step: Sendable {
        public var waitFor: String?
        public var send: String
        public var hangsUp = false
        /// How `send` is typed: the terminal's character set, as Python names it (`euc_jp`).
        public var encoding = "utf-8"
        /// Seconds to wait before sending (after `waitFor`, if any).
        public var delay = 0.1
        public init(waitFor: String?, send: String, encoding: String = "utf-8", delay: Double = 0.1) {
            self.waitFor = waitFor
            self.send = send
            self.encoding = encoding
            self.delay = delay
        }

        /// Waits for `waitFor`, then closes the terminal.
        public static func hangUp(after waitFor: String) -> Step {
            var step = Step(waitFor: waitFor, send: "")
            step.hangsUp = true
            return step
        }
    }

    /// What the terminal showed and how the program ended: its exit status, or 128 + the signal
    /// that ended it (as a shell reports it); `timedOut` when a step's text never came.
    public struct Result: Sendable {
        public var status: Int32
        public var screen: String
        public var timedOut: Bool
    }

    private static let driver = #"""
        import json, os, pty, select, sys, time
        steps = json.loads(sys.argv[1])
        argv = sys.argv[2:]
        pid, fd = pty.fork()
        if pid == 0:
            # As a login shell would start it: no signal blocked or ignored (the test runner's
            # threads block some, and a child inherits that).
            import signal
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE):
                signal.signal(number, signal.SIG_DFL)
            # And no descriptor but the terminal's: Foundation's Process learns that the driver
            # ended when a socket it handed it closes, which a program left running in the
            # background (`nohup mapgate serve &`) would otherwise hold open.
            os.closerange(3, 65536)
            os.execv(argv[0], argv)
        screen = b""
        timed_out = False
        def read(until, limit):
            global screen
            deadline = time.monotonic() + limit
            while until is None or until.encode() not in screen:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                ready, _, _ = select.select([fd], [], [], min(left, 0.2))
                if ready:
                    try:
                        data = os.read(fd, 65536)
                    except OSError:
                        return until is None
                    if not data:
                        return until is None
                    screen += data
            return True
        hung_up = False
        for step in steps:
            if step["waitFor"] is not None and not read(step["waitFor"], 30):
                timed_out = True
                break
            time.sleep(step["delay"])
            if step["hangsUp"]:
                os.close(fd)
                hung_up = True
                break
            os.write(fd, step["send"].encode(step["encoding"]))
        def group_alive():
            # Every process of the terminal's group, not only its first: under faketime, mapgate
            # is the session leader's child, and outlives it when it ignores the hang-up.
            for entry in os.listdir("/proc"):
                try:
                    stat = open("/proc/%s/stat" % entry).read()
                except (OSError, ValueError):
                    continue
                fields = stat[stat.rindex(")") + 2:].split()
                if int(fields[2]) == pid and fields[0] != "Z":
                    return True
            return False
        if hung_up:
            deadline = time.monotonic() + 15
            while group_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            if group_alive():
                timed_out = True
                os.killpg(pid, 9)
            _, status = os.waitpid(pid, 0)
        else:
            read(None, 60)
            if timed_out:
                os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
        code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"status": code, "screen": screen.decode("utf-8", "replace"), "timedOut": timed_out}))
        """#

    /// Runs `program` with `arguments` and `environment` (over this process's) on a terminal,
    /// going through `steps`. The driver reads its steps as UTF-8 whatever the program's locale
    /// (Python's UTF-8 mode: a `ja_JP.eucJP` locale made it read them as EUC-JP).
    public static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:], steps: [Step]) throws -> Result {
        let encoded = String(decoding: try JSONSerialization.data(withJSONObject: steps.map { ["waitFor": $0.waitFor as Any, "send": $0.send, "hangsUp": $0.hangsUp, "encoding": $0.encoding, "delay": $0.delay] }), as: UTF8.self)
        let result = try runProcess("/usr/bin/python3", ["-X", "utf8", "-c", driver, encoded, program] + arguments, environment: environment, timeout: 120)
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let status = object["status"] as? Int, let screen = object["screen"] as? String
        else {
            throw MissingFixture(path: "the terminal driver's report (\(result.stdout) \(result.stderr))")
        }
        return Result(status: Int32(status), screen: screen, timedOut: object["timedOut"] as? Bool ?? true)
    }
}

extension MapGateBinary {
    /// Runs `mapgate` on a terminal at `time` (as ``run(_:at:environment:stdin:standIns:)`` does),
    /// going through `steps`. `PATH` has no `xdg-open`, so "update now" prints the store's URL.
    /// `prefix`: a command that runs first and then mapgate (`sh -c 'sleep 1; exec "$@"' sh`).
    public func runOnTerminal(
        _ arguments: [String], at time: String, environment: [String: String] = [:], prefix: [String] = [], steps: [TerminalSession.Step]
    ) throws -> TerminalSession.Result {
        let full = arguments + ["--config", configPath, "--data-dir", dataDirectory]
        let (program, rest) = command(prefix + ["/usr/bin/faketime", time, path] + full)
        let env = baseEnvironment.merging(["PATH": "/usr/bin:/bin", "TERM": "xterm"]) { $1 }.merging(environment) { $1 }
        return try TerminalSession.run(program, rest, environment: env, steps: steps)
    }
}
