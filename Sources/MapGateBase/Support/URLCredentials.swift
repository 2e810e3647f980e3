import FoundationEssentials

/// The user names and passwords a URL may carry (`http://user:secret@host/`): a mirror behind
/// basic authentication is reached with them, but they are never recorded nor shown (found by an
/// attack: `sync --from http://user:secret@HOST` kept the password in the state database, readable
/// by all, and showed it in `list --json` and in every message naming a package).
public enum URLCredentials {
    /// `url` without its user name and password.
    public static func removed(from url: String) -> String {
        guard url.contains("@"), var components = URLComponents(string: url), components.user != nil || components.password != nil else { return url }
        components.user = nil
        components.password = nil
        return components.string ?? url
    }

    /// `text`, a URL that could not be read, with everything between its scheme (`http:`, and the
    /// slashes after it, any number, either way) and its last `@` shown as `***`: where its host
    /// begins is not known. Found by attacks: a password holding a raw `/` (`http://u:se/cret@host`)
    /// was shown whole by the error saying it is no URL, and one slash short (`http:/u:secret@host`,
    /// taken for a folder) by the error saying there is no such folder.
    public static func hidden(inUnreadable text: String) -> String {
        guard let scheme = text.firstMatch(of: /^[A-Za-z][A-Za-z0-9+.\-]*:[\/\\]*/), let at = text.lastIndex(of: "@"), at >= scheme.range.upperBound
        else { return text }
        return text[..<scheme.range.upperBound] + "***" + text[at...]
    }

    /// `text` with the user name and password of every URL in it shown as `***`: all before the
    /// last `@` ahead of the URL's path (found by the attack on the redaction: a password holding
    /// a raw `@`, `p@ss`, was shown from the `@` on).
    public static func redacted(in text: String) -> String {
        guard text.contains("://"), text.contains("@") else { return text }
        // No `"`, `<`, `>` or `\` in user information (RFC 3986): a JSON string's end is not crossed.
        return text.replacing(/([A-Za-z][A-Za-z0-9+.\-]*:\/\/)[^\/\s"<>\\]*@/) { match in "\(match.output.1)***@" }
    }
}
