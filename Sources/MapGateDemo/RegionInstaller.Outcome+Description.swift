import FoundationEssentials
import MapGate

private typealias L = Localization

/// A sync's outcome as the demo tells it (`mapgate sync` renders its own, as text or JSON).
extension RegionInstaller.Outcome: CustomStringConvertible {
    /// In the user's language (``Localization``), English until it is set up.
    public var description: String {
        switch self {
        case .upToDate(let version):
            return L.format(L.localized("%s up to date"), version)
        case .installed(let version, let previous?, let downloaded, let resumedFrom) where resumedFrom > 0:
            return L.format(
                L.localized("updated from %1$s to %2$s (%3$s bytes downloaded, resumed at byte %4$s)"), previous, version, String(downloaded),
                String(resumedFrom))
        case .installed(let version, let previous?, let downloaded, _):
            return L.format(L.localized("updated from %1$s to %2$s (%3$s bytes downloaded)"), previous, version, String(downloaded))
        case .installed(let version, nil, let downloaded, let resumedFrom) where resumedFrom > 0:
            return L.format(L.localized("installed %1$s (%2$s bytes downloaded, resumed at byte %3$s)"), version, String(downloaded), String(resumedFrom))
        case .installed(let version, nil, let downloaded, _):
            return L.format(L.localized("installed %1$s (%2$s bytes downloaded)"), version, String(downloaded))
        case .repaired(let version, let downloaded, let resumedFrom) where resumedFrom > 0:
            return L.format(L.localized("repaired %1$s (%2$s bytes downloaded, resumed at byte %3$s)"), version, String(downloaded), String(resumedFrom))
        case .repaired(let version, let downloaded, _):
            return L.format(L.localized("repaired %1$s (%2$s bytes downloaded)"), version, String(downloaded))
        case .patched(let version, let previous, let downloaded, let fullSize):
            return L.format(
                L.localized("updated from %1$s to %2$s (delta, %3$s of %4$s bytes)"), previous, version, String(downloaded), String(fullSize))
        }
    }
}
