import FoundationEssentials

/// The gate is closed: the command is refused until the app is updated (exit 77).
public struct GateClosedError: MapGateFailure, LocalizedError, Sendable {
    public let installedVersion: String
    public let requiredVersion: String
    public let storeURL: String?
    public var kind: FailureKind { .updateRequired }
    public var errorDescription: String? {
        var text = "update required: mapgate \(installedVersion) may no longer be used; install version \(requiredVersion)"
        if let storeURL { text += " from \(storeURL)" }
        return text
    }
}
