import FoundationEssentials
import MapGateBase

extension InstalledRegion {
    /// Where the region's package came from, in a few words for `list`: `mirror /media/usb/maps`
    /// or `mirror 192.168.1.20:8080` for a mirror (a package named by its hash under
    /// `packages/`), else the publisher's host (or the folder of a `file://` catalog).
    public var origin: String? {
        guard let sourceURL, let url = URL(string: sourceURL) else { return nil }
        let path = url.path
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let isMirror = parts.count >= 2 && parts[parts.count - 2] == Substring(MirrorLayout.packagesFolder) && parts[parts.count - 1].isSHA256Hex
        var place: String
        if url.scheme?.lowercased() == "file" {
            place = PathText.deletingLastComponent(isMirror ? PathText.deletingLastComponent(path) : path)
        } else {
            place = url.host ?? sourceURL
            if let port = url.port { place += ":\(port)" }
        }
        return isMirror ? "mirror " + place : place
    }
}
