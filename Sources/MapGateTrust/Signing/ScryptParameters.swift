import CCrypto
import MapGateBase

/// The scrypt cost (N, r, p) behind an encrypted minisign secret key, and the key derivation.
///
/// minisign stores libsodium's `opslimit` and `memlimit`, not N, r and p: libsodium's
/// `crypto_pwhash_scryptsalsa208sha256` turns them into scrypt parameters (its `pickparams`), and
/// ``init(opsLimit:memLimit:)`` does the same arithmetic. The derivation itself is plain scrypt
/// (RFC 7914), run by libcrypto's `EVP_PBE_scrypt`.
struct ScryptParameters: Equatable, Sendable {
    /// log2 of N, the CPU and memory cost.
    let costLog2: Int
    /// r, the block size.
    let blockSize: UInt64
    /// p, the parallelisation.
    let parallelism: UInt64

    /// The most memory a key file may make the derivation use. minisign's default
    /// (libsodium's `MEMLIMIT_SENSITIVE`) needs 1 GiB; a file asking for more than 4 GiB is refused.
    static let maximumMemory: UInt64 = 4 << 30
    /// The largest p accepted. minisign's keys use 1; a large p only multiplies the work.
    static let maximumParallelism: UInt64 = 16

    init(costLog2: Int, blockSize: UInt64, parallelism: UInt64) {
        self.costLog2 = costLog2
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// libsodium's choice of N, r and p for an opslimit and a memlimit.
    init(opsLimit: UInt64, memLimit: UInt64) {
        let opsLimit = max(opsLimit, 32768)
        let blockSize: UInt64 = 8
        var costLog2 = 1
        if opsLimit < memLimit / 32 {
            let maximumCost = opsLimit / (blockSize * 4)
            while costLog2 < 63, (UInt64(1) << costLog2) <= maximumCost / 2 { costLog2 += 1 }
            self.init(costLog2: costLog2, blockSize: blockSize, parallelism: 1)
        } else {
            let maximumCost = memLimit / (blockSize * 128)
            while costLog2 < 63, (UInt64(1) << costLog2) <= maximumCost / 2 { costLog2 += 1 }
            let maximumBlocksTimesParallelism = min((opsLimit / 4) / (UInt64(1) << costLog2), 0x3fff_ffff)
            self.init(costLog2: costLog2, blockSize: blockSize, parallelism: maximumBlocksTimesParallelism / blockSize)
        }
    }

    /// N.
    var cost: UInt64 { UInt64(1) << costLog2 }

    /// What `EVP_PBE_scrypt` allocates (its own `maxmem` check): p·128·r for B plus 128·r·(N+2)
    /// for V. Nil when that does not fit in 64 bits.
    var memoryNeeded: UInt64? {
        let blocks = parallelism.multipliedReportingOverflow(by: 128 * blockSize)
        let table = (cost + 2).multipliedReportingOverflow(by: 128 * blockSize)
        guard !blocks.overflow, !table.overflow else { return nil }
        let total = blocks.partialValue.addingReportingOverflow(table.partialValue)
        return total.overflow ? nil : total.partialValue
    }

    /// `length` bytes of scrypt output for `password` and `salt`. Throws
    /// ``SignatureError/secretKeyMalformed(_:)`` for parameters no minisign key has and that would
    /// take unreasonable memory or time, and ``SignatureError/libcrypto(operation:detail:)`` when
    /// libcrypto fails (out of memory).
    func deriveKey(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        guard costLog2 >= 1, blockSize >= 1, parallelism >= 1 else {
            throw SignatureError.secretKeyMalformed("its scrypt parameters are unusable (N=2^\(costLog2), r=\(blockSize), p=\(parallelism))")
        }
        guard parallelism <= Self.maximumParallelism else {
            throw SignatureError.secretKeyMalformed(
                "its scrypt work factor is too high (p=\(parallelism); at most \(Self.maximumParallelism) is accepted)")
        }
        guard let memory = memoryNeeded, memory <= Self.maximumMemory else {
            throw SignatureError.secretKeyMalformed(
                "its scrypt parameters (N=2^\(costLog2), r=\(blockSize)) need more than the \(Self.maximumMemory >> 30) GiB accepted")
        }
        try SharedLibrary.crypto.load()
        var output = [UInt8](repeating: 0, count: length)
        let result = password.withUnsafeBytes { passwordBytes in
            passwordBytes.withNonNullBytes { passwordPointer, passwordCount in
                passwordPointer.withMemoryRebound(to: CChar.self, capacity: max(passwordCount, 1)) { passwordChars in
                    ccrypto_EVP_PBE_scrypt(
                        passwordChars, passwordCount, salt, salt.count, cost, blockSize, parallelism,
                        memory, &output, output.count)
                }
            }
        }
        guard result == 1 else {
            throw OpenSSLErrorQueue.error("EVP_PBE_scrypt (N=2^\(costLog2), r=\(blockSize), p=\(parallelism), \(memory >> 20) MiB)")
        }
        return output
    }
}
