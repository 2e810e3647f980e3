import Foundation
import MapGate
import Testing

/// What `--from` names: a folder, or a mirror's URL.
@Suite struct MirrorLayoutTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/.well-known/mapgate-mirror"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/.well-known/mapgate-mirror"),
        ("https://intranet.example/maps-mirror/", "https://intranet.example/maps-mirror"),
    ])
    func aMirrorsURLIsItsFolders(_ source: String, _ base: String) throws {
        #expect(try MirrorLayout.baseURL(from: source, currentDirectory: "/") == base)
    }

    /// A query or a fragment would come before the mirror's file names (found by an attack:
    /// `?token=abc` asked for `/.well-known/mapgate-mirror?token=abc/catalog.json`): a usage
    /// error that names the URL, without its password.
    @Test(arguments: ["http://127.0.0.1:8080?token=abc", "http://127.0.0.1:8080/m#f", "https://user:s3cret@intranet.example/m?x=1", "file:///stick?x", "file:///stick#f"])
    func aQueryOrAFragmentIsRefused(_ source: String) throws {
        let message = usageError(from: source)
        #expect(message.contains("without a query (?…) or a fragment (#…)") && !message.contains("s3cret"), "\(message)")
    }

    /// A URL that cannot be read is named without what may be its password: everything between
    /// `://` and the last `@` (found by an attack: a password holding a raw `/` was shown whole).
    @Test(arguments: ["http://user:se/cret@127.0.0.1:8080", "https://u:s3/cret@@", "http://user:p/a@ss@[::1"])
    func anUnreadableURLIsNamedWithoutItsPassword(_ source: String) throws {
        let message = usageError(from: source)
        #expect(message.contains("not a URL") && message.contains("://***@") && !message.contains("cret") && !message.contains("p/a"), "\(message)")
    }

    /// `sync` warns of a password sent in the clear: over plain HTTP to another machine, not for
    /// a user name alone nor to a loopback address (found by an attack: both were warned of).
    @Test(arguments: [
        ("http://user:s3cret@192.168.1.20:8080/m", true), ("HTTP://u:p@maps.lan/m", true), ("https://user:s3cret@192.168.1.20/m", false),
        ("http://user@192.168.1.20/m", false), ("http://user:@192.168.1.20/m", false), ("http://user:s3cret@127.0.0.1:8080/m", false),
        ("http://user:s3cret@localhost:8080/m", false), ("http://user:s3cret@[::1]:8080/m", false), ("http://192.168.1.20/m", false),
    ])
    func aPasswordGoesInTheClearOnlyOverPlainHTTPToAnotherMachine(_ base: String, _ inTheClear: Bool) {
        #expect(MirrorLayout.sendsPasswordInTheClear(base) == inTheClear)
    }

    /// A `--from` one slash short of a URL is taken for a folder, and named without what may be
    /// its password (found by an attack).
    @Test(arguments: ["http:/user:s3cret@127.0.0.1:18813/m", #"http:\user:s3cret@127.0.0.1/m"#])
    func aURLTakenForAFolderIsNamedWithoutItsPassword(_ source: String) {
        let message = usageError(from: source)
        #expect(message.contains("no such folder") && !message.contains("s3cret") && message.contains("***@127.0.0.1"), "\(message)")
    }

    /// The message of the usage error `--from source` gets ("" and an issue when it is taken).
    private func usageError(from source: String) -> String {
        do {
            _ = try MirrorLayout.baseURL(from: source, currentDirectory: "/")
            Issue.record("taken: \(source)")
        } catch let error as GeneralFailure {
            #expect(error.kind == .usage)
            return errorMessage(error)
        } catch {
            Issue.record("\(error)")
        }
        return ""
    }
}
