import FoundationEssentials

/// One compiled GNU gettext catalog (`mapgate.mo`), read into memory.
///
/// The command line asks glibc (`dgettext`), which follows the process's locale. A server answers
/// each browser in the language it asks for (`Accept-Language`), which is not the process's and
/// needs no generated locale: the server reads the same catalogs itself. The format is GNU's
/// (magic 0x950412de, a table of originals and one of translations, each entry a length and an
/// offset); a plural entry's first form is taken.
public struct MessageCatalog: Sendable {
    public let messages: [String: String]

    /// Reads `path`; nil when it is missing or not a catalog.
    public init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 28, data.count <= 16 << 20 else { return nil }
        let bytes = [UInt8](data)
        func word(_ offset: Int, bigEndian: Bool) -> Int? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            let b = bytes[offset..<offset + 4].map(UInt32.init)
            return Int(bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0])
        }
        let bigEndian: Bool
        switch word(0, bigEndian: false) {
        case 0x9504_12de: bigEndian = false
        case 0xde12_0495: bigEndian = true
        default: return nil
        }
        guard let count = word(8, bigEndian: bigEndian), let originals = word(12, bigEndian: bigEndian),
            let translations = word(16, bigEndian: bigEndian), count < 1 << 20
        else { return nil }
        func string(table: Int, index: Int) -> String? {
            guard let length = word(table + 8 * index, bigEndian: bigEndian), let offset = word(table + 8 * index + 4, bigEndian: bigEndian),
                offset >= 0, length >= 0, offset + length <= bytes.count
            else { return nil }
            return String(validating: bytes[offset..<offset + length], as: UTF8.self)
        }
        var messages: [String: String] = [:]
        for index in 0..<count {
            guard let original = string(table: originals, index: index), let translation = string(table: translations, index: index) else { return nil }
            guard !original.isEmpty else { continue }  // the header
            let key = original.split(separator: "\0", omittingEmptySubsequences: false)[0]
            let first = translation.split(separator: "\0", omittingEmptySubsequences: false)[0]
            if !first.isEmpty { messages[String(key)] = String(first) }
        }
        self.messages = messages
    }

    public init(messages: [String: String]) {
        self.messages = messages
    }
}
