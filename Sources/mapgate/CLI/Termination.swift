import Dispatch
import Glibc

/// Waiting for the user to stop a server (Ctrl-C) or for the service manager (SIGTERM); SIGHUP
/// asks it to reload, as daemons do (`systemctl --user reload mapgate-serve`).
enum Termination {
    /// Blocks until SIGINT or SIGTERM, calling `onHangUp` (on another thread) for each SIGHUP;
    /// without one, SIGHUP is ignored rather than ending the server.
    static func wait(onHangUp: @escaping @Sendable () -> Void = {}) {
        for number in [SIGINT, SIGTERM, SIGHUP] { signal(number, SIG_IGN) }
        let done = DispatchSemaphore(value: 0)
        let stopping = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            return source
        }
        let hangUp = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "reload"))
        hangUp.setEventHandler { onHangUp() }
        hangUp.resume()
        done.wait()
        (stopping + [hangUp]).forEach { $0.cancel() }
    }
}
