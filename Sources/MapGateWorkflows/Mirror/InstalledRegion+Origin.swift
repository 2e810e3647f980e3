import FoundationEssentials
import MapGateBase

extension InstalledRegion {
    /// Where the region's package came from, in a few words for `list`: `mirror /media/usb/maps`
    /// or `mirror 192.168.1.20:8080` for a mirror (a package named by its hash under
    /// `packages/`), else the publisher's host (or the folder of a `file://` catalog).
    public var origin: String? {
        guard let sourceURL, let url = URL(string: sourceURL) else { return nil }
        let isMirror = Self.mirrorFolder(of: url) != nil
        var place: String
        if url.scheme?.lowercased() == "file" {
            place = Self.mirrorFolder(of: url) ?? PathText.deletingLastComponent(url.path)
        } else {
            place = url.host ?? sourceURL
            if let port = url.port { place += ":\(port)" }
        }
        return isMirror ? "mirror " + place : place
    }

    /// What `sync --from` takes to install the region again from the mirror it came from (the
    /// folder, or `http://HOST:PORT` of a `serve --share`); nil when it came from the publisher.
    public var mirrorSource: String? {
        guard let sourceURL, let url = URL(string: sourceURL), let base = Self.mirrorFolder(of: url) else { return nil }
        if url.scheme?.lowercased() == "file" { return base }
        guard let scheme = url.scheme, let host = url.host else { return nil }
        // A `serve --share`'s own path is what `--from` adds to an address without one.
        let path = base == "/" || base == MirrorLayout.sharePath ? "" : base
        let authority = host.contains(":") ? "[" + host + "]" : host
        return scheme + "://" + authority + (url.port.map { ":" + String($0) } ?? "") + path
    }

    /// The mirror's folder (its URL's path) when `url` names a mirror's package (`…/packages/SHA256`).
    private static func mirrorFolder(of url: URL) -> String? {
        let parts = url.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[parts.count - 2] == Substring(MirrorLayout.packagesFolder), parts[parts.count - 1].isSHA256Hex else { return nil }
        return PathText.deletingLastComponent(PathText.deletingLastComponent(url.path))
    }
}
