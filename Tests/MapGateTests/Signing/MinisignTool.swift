import Foundation
import TestSupport

/// The real `minisign` program (Debian's `minisign` package), run in a temporary directory.
///
/// Missing, it throws: the signing tests fail out loud instead of skipping.
struct MinisignTool {
    let executable: String
    let directory: TemporaryDirectory

    init() throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let candidates = path.split(separator: ":").map { "\($0)/minisign" } + ["/usr/bin/minisign"]
        guard let executable = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw MissingMinisign()
        }
        self.executable = executable
        directory = try TemporaryDirectory()
    }

    struct MissingMinisign: Error, CustomStringConvertible {
        var description: String {
            "the signing tests need the real minisign: install it with scripts/install-deps (Debian package minisign)"
        }
    }

    struct Failed: Error, CustomStringConvertible {
        let command: String
        let result: ProcessResult
        var description: String {
            "\(command) exited with \(result.status): \(result.stderr) \(result.stdout)"
        }
    }

    struct KeyPair {
        let publicKeyFile: String
        let secretKeyFile: String
        var publicKeyText: String { get throws { try String(contentsOfFile: publicKeyFile, encoding: .utf8) } }
        var secretKeyText: String { get throws { try String(contentsOfFile: secretKeyFile, encoding: .utf8) } }
    }

    @discardableResult
    func run(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        try runProcess(executable, arguments, stdin: stdin, timeout: 120)
    }

    @discardableResult
    func runSucceeding(_ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        let result = try run(arguments, stdin: stdin)
        guard result.status == 0 else { throw Failed(command: "minisign " + arguments.joined(separator: " "), result: result) }
        return result
    }

    /// `minisign -G`: unencrypted with `-W` when `password` is nil, else protected by it (minisign
    /// reads the password twice from standard input when that is not a terminal).
    func generateKeyPair(named name: String, password: String? = nil) throws -> KeyPair {
        let pair = KeyPair(publicKeyFile: directory.file(name + ".pub"), secretKeyFile: directory.file(name + ".key"))
        if let password {
            try runSucceeding(
                ["-G", "-p", pair.publicKeyFile, "-s", pair.secretKeyFile], stdin: "\(password)\n\(password)\n")
        } else {
            try runSucceeding(["-G", "-W", "-p", pair.publicKeyFile, "-s", pair.secretKeyFile])
        }
        return pair
    }

    /// `minisign -S`, writing `<file>.minisig` (or `signatureFile`); returns the signature file.
    @discardableResult
    func sign(
        _ file: String, with pair: KeyPair, trustedComment: String? = nil, untrustedComment: String? = nil,
        legacy: Bool = false, password: String? = nil, signatureFile: String? = nil
    ) throws -> String {
        let signatureFile = signatureFile ?? file + ".minisig"
        var arguments = ["-S", "-s", pair.secretKeyFile, "-m", file, "-x", signatureFile]
        if legacy { arguments.append("-l") }
        if let trustedComment { arguments += ["-t", trustedComment] }
        if let untrustedComment { arguments += ["-c", untrustedComment] }
        try runSucceeding(arguments, stdin: password.map { $0 + "\n" })
        return signatureFile
    }

    /// `minisign -V` of `file` against `signatureFile` and a public key file.
    func verify(_ file: String, signatureFile: String, publicKeyFile: String) throws -> ProcessResult {
        try run(["-V", "-p", publicKeyFile, "-m", file, "-x", signatureFile])
    }

    /// The key ids minisign printed in `output` after the word "is" (`… key id in x.minisig is
    /// 1F03F3D17F38843`). minisign 0.11 prints them with `%lX`, dropping leading zeros; newer
    /// versions pad to 16 digits. Either way, the number is what counts.
    static func printedKeyIDs(in output: String) -> [UInt64] {
        let words = output.split(whereSeparator: \.isWhitespace)
        return zip(words, words.dropFirst()).compactMap { $0 == "is" ? UInt64($1, radix: 16) : nil }
    }

    func write(_ name: String, _ data: Data) throws -> String {
        let path = directory.file(name)
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    func read(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }
}
