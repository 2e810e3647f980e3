import Foundation
import MapGate
import Testing

/// A URL's user name and password: used, never recorded nor shown.
@Suite struct URLCredentialsTests {
    @Test(arguments: [
        ("error: http://user:s3cret@127.0.0.1:8080/x: HTTP 404", "error: http://***@127.0.0.1:8080/x: HTTP 404"),
        ("--from http://user:p@ss@host: not a URL", "--from http://***@host: not a URL"),
        ("HTTPS://TOKEN@host/a and ftp://a:b@c/d", "HTTPS://***@host/a and ftp://***@c/d"),
        ("http://host/path@not-userinfo", "http://host/path@not-userinfo"),
        ("mail user@example.com, see http://host:8080/", "mail user@example.com, see http://host:8080/"),
        ("no url here", "no url here"),
        (#"{"url":"http://host","who":"a@b"}"#, #"{"url":"http://host","who":"a@b"}"#),
        (#"{"source":"http://u:p@host/x"}"#, #"{"source":"http://***@host/x"}"#),
    ])
    func everyURLsUserInformationIsHidden(_ text: String, _ shown: String) {
        #expect(URLCredentials.redacted(in: text) == shown)
    }

    @Test(arguments: [
        ("http://user:s3cret@127.0.0.1:8080/packages/a", "http://127.0.0.1:8080/packages/a"),
        ("https://u%40x:p%3Aw@host/m", "https://host/m"),
        ("file:///stick/packages/a", "file:///stick/packages/a"),
    ])
    func recordsKeepTheURLWithoutThem(_ url: String, _ kept: String) {
        #expect(URLCredentials.removed(from: url) == kept)
    }

    @Test(arguments: [
        ("http://u:se/cret@host", "http://***@host"), ("http://host/a", "http://host/a"), ("user@host", "user@host"),
        ("https://a@b/c@d:x", "https://***@d:x"), ("http:/u:secret@host/m", "http:/***@host/m"), (#"http:\\u:p@h"#, #"http:\\***@h"#),
        ("/media/user@stick", "/media/user@stick"),
    ])
    func anUnreadableURLHidesAllBeforeItsLastAt(_ text: String, _ shown: String) {
        #expect(URLCredentials.hidden(inUnreadable: text) == shown)
    }
}
