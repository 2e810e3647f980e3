import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// Where things are in a mirror (a folder on a USB stick, or a `serve --share` over HTTP):
///
///     catalog.json            the publisher's catalog, byte for byte as signed
///     catalog.json.minisig    its signature
///     mirror.json             what this mirror holds and what it left out (``MirrorManifest``)
///     packages/SHA256         each package, named by the SHA-256 the catalog gives it
///
/// Packages are named by their hash, not by the catalog's URLs (which may point anywhere on the
/// publisher's servers): a mirror is read the same way whatever the publisher's layout, and a
/// new mirror written over an old one never changes a file a reader may be taking.
public enum MirrorLayout {
    public static let catalogName = "catalog.json"
    public static let signatureName = "catalog.json.minisig"
    public static let manifestName = "mirror.json"
    public static let packagesFolder = "packages"
    /// Where `serve --share` offers a mirror: a region id cannot start with a dot, so no region's
    /// routes ever meet it.
    public static let sharePath = "/.well-known/mapgate-mirror"

    public static func packageName(sha256: String) -> String { packagesFolder + "/" + sha256 }

    /// Whether `name` (relative to the mirror) is one of the files a mirror holds: the only names
    /// a share answers, so nothing else in the folder (or outside it) is ever served.
    public static func isMirrorFile(_ name: String) -> Bool {
        if name == catalogName || name == signatureName || name == manifestName { return true }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0] == packagesFolder && parts[1].isSHA256Hex
    }

    /// The base URL of the mirror named by `--from`: a folder (made absolute, as a `file://` URL),
    /// a `file://`, `http://` or `https://` URL of the mirror's folder, or the address of a
    /// `serve --share` (a URL with no path: its share's well-known path is added).
    public static func baseURL(from source: String, currentDirectory: String) throws -> String {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard var components = URLComponents(string: source), components.host?.isEmpty == false else {
                throw GeneralFailure(L.localized("--from %1$s: not a URL (http://HOST:PORT or http://HOST:PORT/PATH)", "\(URLCredentials.hidden(inUnreadable: source))"), kind: .usage)
            }
            // The mirror's files are named after its folder's path: a query or a fragment would
            // come before them (found by an attack: `?token=abc` gave
            // `/.well-known/mapgate-mirror?token=abc/catalog.json`).
            guard components.query == nil, components.fragment == nil else {
                throw GeneralFailure(
                    L.localized("--from %1$s: a mirror's URL is its folder's, without a query (?…) or a fragment (#…)", "\(URLCredentials.removed(from: source))"), kind: .usage)
            }
            if components.path.isEmpty || components.path == "/" { components.path = sharePath }
            guard let text = components.string else {
                throw GeneralFailure(L.localized("--from %1$s: not a URL (http://HOST:PORT or http://HOST:PORT/PATH)", "\(URLCredentials.hidden(inUnreadable: source))"), kind: .usage)
            }
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        if lowered.hasPrefix("file://") {
            // Nor for a folder's URL (found by the attack on that fix: `file:///stick?x` read the
            // folder itself as the catalog).
            guard !source.contains("?"), !source.contains("#") else {
                throw GeneralFailure(
                    L.localized("--from %1$s: a mirror's URL is its folder's, without a query (?…) or a fragment (#…)", "\(source)"), kind: .usage)
            }
            return source.hasSuffix("/") ? String(source.dropLast()) : source
        }
        if lowered.contains("://") {
            throw GeneralFailure(L.localized("--from %1$s: only a folder, or an http, https or file URL, can be a mirror", "\(source)"), kind: .usage)
        }
        let absolute = PathText.standardized(source.hasPrefix("/") ? source : currentDirectory + "/" + source)
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            // Only a name that is not there is a typo; any other failure (a dead FUSE or network
            // mount's ENOTCONN, a loop of links) is the system's, said as such (found by an attack).
            let code = errno
            guard code == ENOENT else {
                // A path that cannot name a folder (a file in it, a name too long) is a typo too.
                throw GeneralFailure(
                    L.localized("--from %1$s: cannot open the folder: %2$s", URLCredentials.hidden(inUnreadable: source), SystemErrorReason.text(code)), kind: [ENOTDIR, ENAMETOOLONG].contains(code) ? .usage : .io)
            }
            throw GeneralFailure(L.localized("--from %1$s: no such folder (a mirror is a folder written by 'mapgate mirror')", URLCredentials.hidden(inUnreadable: source)), kind: .usage)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw GeneralFailure(L.localized("--from %1$s: not a folder (a mirror is a folder written by 'mapgate mirror')", URLCredentials.hidden(inUnreadable: source)), kind: .usage)
        }
        // A folder with no catalog is no mirror: said so, with the mirror inside it if there is
        // one (a stick's own root, `maps/` on it), not as a missing file, 74 (found by an attack).
        // (One cut short while it was written, with its packages or manifest and no catalog yet,
        // is said as the missing file it is.)
        var catalog = stat()
        if lstat(absolute + "/" + catalogName, &catalog) != 0, errno == ENOENT,
            !FileManager.default.fileExists(atPath: absolute + "/" + manifestName), !FileManager.default.fileExists(atPath: absolute + "/packages")
        {
            let inside = ((try? FileManager.default.contentsOfDirectory(atPath: absolute)) ?? []).sorted().first { name in
                !name.hasPrefix(".") && FileManager.default.fileExists(atPath: absolute + "/" + name + "/" + catalogName)
                    && FileManager.default.fileExists(atPath: absolute + "/" + name + "/" + manifestName)
            }
            let said = URLCredentials.hidden(inUnreadable: source)
            guard let inside else {
                throw GeneralFailure(L.localized("--from %1$s: not a mirror: it holds no %2$s (a mirror is a folder written by 'mapgate mirror')", said, catalogName), kind: .usage)
            }
            let folder = absolute + "/" + inside
            throw GeneralFailure(
                L.localized("--from %1$s: not a mirror, but the folder %2$s in it is one: give --from %3$s", said, TerminalText.inline(inside), ShellWord.quoted(folder)),
                kind: .usage)
        }
        return fileURL(absolute)
    }

    /// Whether reaching the mirror at `base` (``baseURL(from:currentDirectory:)``) sends a password
    /// in the clear: basic authentication sends it as it is, and over plain HTTP anyone on the
    /// network between can read it (`sync` warns).
    /// Not for a user name alone (`http://user@host`: no secret) nor a loopback host (no network
    /// between; found by an attack, both were warned of).
    public static func sendsPasswordInTheClear(_ base: String) -> Bool {
        guard base.lowercased().hasPrefix("http://"), let url = URLComponents(string: base), url.password?.isEmpty == false,
            let host = url.host?.lowercased()
        else { return false }
        return !(host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127."))
    }

    /// `file://` and the path, percent-encoded where a URL needs it.
    public static func fileURL(_ path: String) -> String {
        "file://" + path.percentEncoded(allowing: \.isURLPathAllowed)
    }
}
