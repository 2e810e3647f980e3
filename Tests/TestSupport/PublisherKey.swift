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

    /// `minisign -G -W`, then the secret key encrypted with `password` as minisign encrypts it
    /// (scrypt, then XOR; BLAKE2b-256 checksum) but with cheap scrypt parameters (N = 2¹⁰, r = 8,
    /// p = 1: what libsodium picks for opslimit 32,768 and memlimit 16 MiB, both stored in the
    /// key) instead of `minisign -G`'s 1 GiB, which takes seconds each time the key is made or
    /// opened. For tests of how the password is asked, not of the key derivation (those use keys
    /// of the real `minisign -G`). The real `minisign -S` signs with it, checked here.
    public init(in folder: String, name: String = "publisher", cheapPassword password: String) throws {
        try self.init(in: folder, name: name)
        let encrypt = """
            import base64, hashlib, os, struct, sys
            path, password = sys.argv[1], sys.argv[2].encode()
            comment, body = open(path).read().splitlines()[:2]
            raw = base64.b64decode(body)
            assert raw[2:4] == bytes(2), "already encrypted"
            sig_alg, chk_alg, key_id, secret = raw[0:2], raw[4:6], raw[54:62], raw[62:126]
            checksum = hashlib.blake2b(sig_alg + key_id + secret, digest_size=32).digest()
            salt = os.urandom(32)
            stream = hashlib.scrypt(password, salt=salt, n=1 << 10, r=8, p=1, dklen=104)
            sealed = bytes(a ^ b for a, b in zip(key_id + secret + checksum, stream))
            key = sig_alg + b"Sc" + chk_alg + salt + struct.pack("<QQ", 32768, 16 << 20) + sealed
            open(path, "w").write(comment + "\\n" + base64.b64encode(key).decode() + "\\n")
            """
        let made = try runProcess("/usr/bin/python3", ["-c", encrypt, secretKeyFile, password])
        guard made.status == 0 else { throw MissingFixture(path: "an encrypted key (python3): \(made.stderr)") }
        let probe = folder + "/.\(name)-probe"
        try Data("probe".utf8).write(to: URL(fileURLWithPath: probe))
        defer { try? FileManager.default.removeItem(atPath: probe); try? FileManager.default.removeItem(atPath: probe + ".minisig") }
        let signed = try runProcess("/usr/bin/minisign", ["-S", "-s", secretKeyFile, "-m", probe], stdin: password + "\n")
        guard signed.status == 0 else { throw MissingFixture(path: "a key minisign signs with after encrypting it: \(signed.stderr)") }
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
