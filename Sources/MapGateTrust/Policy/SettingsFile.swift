import FoundationEssentials

/// Which settings file an error is about.
public enum SettingsFile: String, Sendable, Equatable {
    /// The user's preferences (`config.json`).
    case configuration = "config"
    /// The administrator's or publisher's rules (`/etc/mapgate/policy.json`).
    case managedPolicy = "managed policy"
    /// The system service's catalog credentials (`/etc/mapgate/credentials`, issue 36).
    case credentials = "credentials"
}
