import Dispatch
import Glibc

/// Waiting for the user to stop a server (Ctrl-C) or for the service manager (SIGTERM).
enum Termination {
    /// Blocks until SIGINT or SIGTERM.
    static func wait() {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let done = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            return source
        }
        done.wait()
        sources.forEach { $0.cancel() }
    }
}
