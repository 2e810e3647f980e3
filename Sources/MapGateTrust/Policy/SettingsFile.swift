import FoundationEssentials
import MapGateBase

/// Which settings file an error is about.
public enum SettingsFile: String, Sendable, Equatable {
    /// The user's preferences (`config.json`).
    case configuration = "config"
    /// The administrator's or publisher's rules (`/etc/mapgate/policy.json`).
    case managedPolicy = "managed policy"
    /// The system service's catalog credentials (`/etc/mapgate/credentials`, issue 36).
    case credentials = "credentials"

    /// How messages name the file, in the user's language (the raw value stays English).
    public var label: String {
        switch self {
        // TRANSLATORS: the user's configuration file, as an error names it: "config PATH: key …".
        case .configuration: L.localized("config")
        // TRANSLATORS: the administrator's or publisher's policy file, as an error names it.
        case .managedPolicy: L.localized("managed policy")
        // TRANSLATORS: the system service's catalog credentials file, as an error names it.
        case .credentials: L.localized("credentials")
        }
    }
}
