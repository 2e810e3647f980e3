import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// For the kill-at-each-stage tests: `MAPGATE_FAULT_KILL_AT=validating|installing|installed|downloading@BYTES`
/// makes this process SIGKILL itself there, as a power cut or `kill -9` would.
struct FaultInjection {
    let stage: String?
    let bytes: Int64?

    init(environment: [String: String]) {
        let value = environment["MAPGATE_FAULT_KILL_AT"]
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
    }

    func reachedBytes(_ received: Int64) {
        if let bytes, received >= bytes { kill(getpid(), SIGKILL) }
    }
}
