/// The 8-byte id minisign gives a key pair at random and writes into every signature it makes.
///
/// Files store the 8 bytes as they are; minisign *prints* them as the little-endian 64-bit number
/// they encode, in uppercase hex (`minisign public key 8926329D049F2B13`). ``hex`` always has 16
/// digits, as current minisign prints them; minisign 0.11 (Debian 12) prints the same number with
/// `%lX`, without leading zeros (`1F03F3D17F38843` for ``hex`` `01F03F3D17F38843`).
public struct MinisignKeyID: Hashable, Sendable, CustomStringConvertible {
    /// The id as minisign prints it: the 8 bytes read as a little-endian number.
    public let value: UInt64

    public init(value: UInt64) {
        self.value = value
    }

    /// The id from its 8 bytes in file order. `bytes` must hold exactly 8 (callers slice them).
    init(bytes: some Collection<UInt8>) {
        var value: UInt64 = 0
        for (index, byte) in bytes.prefix(8).enumerated() {
            value |= UInt64(byte) << (8 * UInt64(index))
        }
        self.value = value
    }

    /// The 8 bytes in the order files store them.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// 16 uppercase hex digits: the number minisign prints, zero-padded.
    public var hex: String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    public var description: String { hex }
}
