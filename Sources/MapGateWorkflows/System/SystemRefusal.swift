import FoundationEssentials
import MapGateBase

/// Why the system service did not run a command: sent to the command, which says it in the
/// user's language (``errorDescription``) and exits with ``kind``'s code.
public struct SystemRefusal: Codable, Sendable, Equatable, MapGateFailure, LocalizedError {
    public enum Reason: String, Codable, Sendable {
        /// The command is not one the service runs (`publish`, `demo`…).
        case command
        /// Only the machine's map administrators (root, the `mapgate` group) may run it.
        case administrator
        /// Only the machine's map administrators may hand its maps over whole (`mirror`).
        case handsOver
        /// An option that would make the service read or write a place the caller names, or
        /// reach beyond this machine.
        case option
        /// A file the caller names for the service to write (`export REGION FILE`): the caller's
        /// own process writes it, from what the service sends.
        case destination
        /// An option of a tile server of the command's own: the machine has one, set by the policy.
        case machineServer
        /// Too many requests under way in all (the subject: how many), for one who is not an
        /// administrator: the last few are kept for administrators.
        case busy
        /// Too many requests under way for this user (the subject: how many one user may have).
        case userBusy
        /// A command that reaches the network, run again too soon by a user who is not an
        /// administrator (``SystemAccess/paced``).
        case tooSoon
        /// Not a request the service understands.
        case request
        /// The service could not start the command.
        case start
    }

    public var reason: Reason
    /// The command or option concerned.
    public var subject: String
    /// For ``Reason/administrator`` and ``Reason/handsOver``: the administrators' group the
    /// service was started with (`system-service --admin-group`); nil: the default.
    public var group: String?

    public init(_ reason: Reason, _ subject: String, group: String? = nil) {
        self.reason = reason
        self.subject = subject
        self.group = group
    }

    public var kind: FailureKind {
        switch reason {
        case .command, .option, .machineServer, .destination: .usage
        case .administrator, .handsOver, .request: .failure
        case .busy, .userBusy, .tooSoon, .start: .unavailable
        }
    }

    public var errorDescription: String? {
        switch reason {
        case .command:
            L.localized("'%1$s' is not available in system mode: the machine's maps are the system service's", subject)
        case .administrator:
            L.localized("'%1$s' changes the machine's maps: only root and members of the group %2$s may run it in system mode", subject, group ?? SystemAccess.administratorGroupName)
        case .handsOver:
            L.localized("'%1$s' hands over the machine's maps whole: only root and members of the group %2$s may run it in system mode", subject, group ?? SystemAccess.administratorGroupName)
        case .option:
            L.localized("option --%1$s is not available in system mode (the system service runs the command, and reads and writes only its own files)", subject)
        case .destination:
            L.localized("%1$s: in system mode the system service writes no file a user names; mapgate writes it from your own process (export REGION FILE), or give - for standard output", subject)
        case .machineServer:
            L.localized("option --%1$s is not available in system mode: the machine has one tile server, the system service's, on the port the managed policy names (systemTilePort)", subject)
        case .busy:
            L.localized("the system service is busy (%1$s requests under way); try again", subject)
        case .userBusy:
            L.localized("you have %1$s requests under way in the system service, the most one user may have; try again when one has ended", subject)
        case .tooSoon:
            L.localized("'%1$s' makes the system service reach the network for the whole machine: a user who is not a map administrator may run it once a minute; try again in a minute", subject)
        case .request:
            L.localized("the system service did not understand the request: %1$s", subject)
        case .start:
            L.localized("the system service could not start the command: %1$s", subject)
        }
    }
}
