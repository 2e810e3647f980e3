import MapGate

private typealias L = Localization

extension RegionStatus {
    /// `catalog`'s STATUS column in the user's language (`--json` keeps ``rawValue``).
    func label(requiring required: String?) -> String {
        if let required { return L.localized("needs mapgate %1$s", required) }
        switch self {
        case .notInstalled: return L.localized("not installed")
        case .installed: return L.localized("installed")
        case .updateAvailable: return L.localized("update available")
        case .needsNewerApp: return L.localized("needs a newer mapgate")
        }
    }
}
