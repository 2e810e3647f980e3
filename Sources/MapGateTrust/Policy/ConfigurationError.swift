import FoundationEssentials
import MapGateBase

/// A settings file that cannot be used. Always names the file, and the key when there is one.
public struct ConfigurationError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let file: SettingsFile
    public let path: String
    public let key: String?
    public let reason: String
    public var kind: FailureKind { .usage }

    public init(file: SettingsFile = .configuration, path: String, key: String?, reason: String) {
        self.file = file
        self.path = path
        self.key = key
        self.reason = reason
    }

    public var errorDescription: String? {
        if let key { return L.localized("%1$s %2$s: key \"%3$s\": %4$s", "\(file.label)", "\(path)", "\(key)", "\(reason)") }
        return L.localized("%1$s %2$s: %3$s", file.label, path, reason)
    }
}
