import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// For the kill-at-each-stage tests: `MAPGATE_FAULT_KILL_AT=validating|installing|installed|downloading@BYTES|mirror-package`
/// makes this process SIGKILL itself there, as a power cut or `kill -9` would;
/// `MAPGATE_FAULT_STOP_AT=delivering|delivered|downloading@BYTES` stops it there (SIGSTOP; at the bytes,
/// once) until the test has done what a hostile user (or a stick pulled out) would at that moment
/// and sends SIGCONT. A test hook: only debug builds (the ones the tests run) read the variables;
/// a release build never does.
struct FaultInjection {
    let stage: String?
    let bytes: Int64?
    let stopStage: String?
    let stopBytes: Int64?
    /// Set when the stop at `stopBytes` happened (the progress is reported again after SIGCONT).
    private let stoppedAtBytes = Flag()

    private final class Flag: Sendable {
        let raised = Atomic<Bool>(false)
    }

    init(environment: [String: String]) {
        #if DEBUG
        let value = environment["MAPGATE_FAULT_KILL_AT"]
        stopStage = environment["MAPGATE_FAULT_STOP_AT"]
        #else
        let value: String? = nil
        stopStage = nil
        #endif
        stopBytes = stopStage.flatMap { $0.hasPrefix("downloading@") ? Int64($0.dropFirst("downloading@".count)) : nil }
        if let value, value.hasPrefix("downloading@") {
            stage = nil
            bytes = Int64(value.dropFirst("downloading@".count))
        } else {
            stage = value
            bytes = nil
        }
    }

    func reached(_ name: String) {
        if name == stage { kill(getpid(), SIGKILL) }
        if name == stopStage { kill(getpid(), SIGSTOP) }
    }

    func reachedBytes(_ received: Int64) {
        if let bytes, received >= bytes { kill(getpid(), SIGKILL) }
        if let stopBytes, received >= stopBytes, !stoppedAtBytes.raised.exchange(true, ordering: .relaxed) { kill(getpid(), SIGSTOP) }
    }
}
