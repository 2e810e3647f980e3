import Foundation

/// A publisher's signing key made by the real `minisign` (Debian's package), and signatures made
/// with it: what a publisher's own tools do, so the tests check interop, not just our code.
public struct PublisherKey: Sendable {
    public let secretKeyFile: String
    public let publicKeyFile: String

    /// `minisign -G -W` (no password) into `folder`.
    public init(in folder: String, name: String = "publisher") throws {
        secretKeyFile = folder + "/\(name).key"
        publicKeyFile = folder + "/\(name).pub"
        let made = try runProcess("/usr/bin/minisign", ["-G", "-W", "-f", "-p", publicKeyFile, "-s", secretKeyFile])
        guard made.status == 0 else { throw MissingFixture(path: "a key from minisign (install it with scripts/install-deps): \(made.stderr)") }
    }

    /// A key already made: `name.key` and `name.pub` in `folder`.
    public init(existingIn folder: String, name: String) {
        secretKeyFile = folder + "/\(name).key"
        publicKeyFile = folder + "/\(name).pub"
    }

    /// The key debug builds trust to sign managed policies (``ProductProfile/policyKeys``), so
    /// that a test's policy may loosen the profile (a lookup on 127.0.0.1). Never trusted by a
    /// release build.
    public static var testPolicy: PublisherKey { PublisherKey(existingIn: TestPaths.repository + "/Fixtures/keys", name: "test-policy") }

    /// The `RW…` line a policy's `trustedKeys` lists.
    public var publicKeyLine: String {
        get throws {
            let text = try String(contentsOfFile: publicKeyFile, encoding: .utf8)
            return text.split(separator: "\n").map(String.init).first { $0.hasPrefix("RW") } ?? ""
        }
    }

    /// `minisign -S -s KEY -m FILE`: writes `FILE.minisig`.
    public func sign(_ file: String, trustedComment: String? = nil) throws {
        var arguments = ["-S", "-s", secretKeyFile, "-m", file]
        if let trustedComment { arguments += ["-t", trustedComment] }
        let signed = try runProcess("/usr/bin/minisign", arguments)
        guard signed.status == 0 else { throw MissingFixture(path: "a signature from minisign: \(signed.stderr)") }
    }
}
