import FoundationEssentials
import MapGateBase

/// The gate is closed: the command is refused until the app is updated (exit 77).
public struct GateClosedError: MapGateFailure, LocalizedError, Sendable {
    public let installedVersion: String
    public let requiredVersion: String
    public let storeURL: String?
    public var kind: FailureKind { .updateRequired }
    public var errorDescription: String? {
        let L = Localization.self
        var text = L.format(L.localized("update required: mapgate %1$s may no longer be used; install version %2$s"), installedVersion, requiredVersion)
        if let storeURL { text += L.format(L.localized(" from %s"), storeURL) }
        return text
    }
}
