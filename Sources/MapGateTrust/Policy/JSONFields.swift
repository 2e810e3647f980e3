import FoundationEssentials
import MapGateBase

/// Reads typed fields of a settings file's JSON object (the user's configuration, the managed
/// policy), remembering which keys were used so that an unknown key is an error, never ignored.
struct JSONFields {
    let path: String
    let file: SettingsFile
    let fields: [String: JSONValue]
    var used: Set<String> = []

    /// Parses `data` as one JSON object; errors name the file and, with a parse error, the position.
    init(data: Data, path: String, file: SettingsFile) throws {
        self.path = path
        self.file = file
        let object: JSONValue
        do {
            object = try JSONValue(parsing: data)
        } catch {
            throw ConfigurationError(file: file, path: path, key: nil, reason: L.localized("not valid JSON (%1$s)", error.explanation(in: data)))
        }
        guard let fields = object.objectValue else {
            throw ConfigurationError(file: file, path: path, key: nil, reason: L.localized("must be a JSON object"))
        }
        self.fields = fields
    }

    func fail(_ key: String, _ reason: String) -> ConfigurationError {
        ConfigurationError(file: file, path: path, key: key, reason: reason)
    }

    var keys: Dictionary<String, JSONValue>.Keys { fields.keys }

    /// The raw value, or nil when absent or JSON null. JSON booleans are told apart from numbers.
    private mutating func raw(_ key: String) -> JSONValue? {
        used.insert(key)
        guard let value = fields[key], !value.isNull else { return nil }
        return value
    }

    /// A string `valid` accepts; `must` says what it must be, for the error (found by an attack:
    /// `"fonts"` was an "invalid value" with no word of an absolute path).
    mutating func string(_ key: String, must: String? = nil, valid: (String) -> Bool) throws -> String? {
        guard let value = raw(key) else { return nil }
        guard let text = value.stringValue else { throw fail(key, L.localized("must be a string")) }
        guard valid(text) else { throw invalid(key, text, must: must) }
        return text
    }

    mutating func strings(_ key: String, must: String? = nil, valid: (String) -> Bool) throws -> [String]? {
        guard let value = raw(key) else { return nil }
        guard let list = value.arrayValue, case let texts = list.compactMap(\.stringValue), texts.count == list.count else { throw fail(key, L.localized("must be a list of strings")) }
        if let bad = texts.first(where: { !valid($0) }) { throw invalid(key, bad, must: must) }
        return texts
    }

    private func invalid(_ key: String, _ text: String, must: String?) -> ConfigurationError {
        guard let must else { return fail(key, L.localized("invalid value \"%1$s\"", "\(text)")) }
        return fail(key, L.localized("invalid value \"%1$s\": must be %2$s", "\(text)", must))
    }

    /// What a file's path must be, for ``string(_:must:valid:)``.
    static var absolutePath: String { L.localized("an absolute path (starting with /)") }

    mutating func boolean(_ key: String) throws -> Bool? {
        guard let value = raw(key) else { return nil }
        guard value.isBoolean, let flag = value.bool else { throw fail(key, L.localized("must be true or false")) }
        return flag
    }

    mutating func url(_ key: String, schemes: Set<String>) throws -> String? {
        guard let text = try string(key, valid: { _ in true }) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
            scheme == "file" || url.host?.isEmpty == false
        else {
            throw fail(key, L.localized("\"%1$s\" is not an absolute %2$s URL", "\(text)", "\(schemes.sorted().joined(separator: "/"))"))
        }
        return text
    }

    mutating func number(_ key: String, range: ClosedRange<Double>) throws -> Double? {
        guard let value = raw(key) else { return nil }
        guard !value.isBoolean, let number = value.double, number.isFinite else {
            throw fail(key, L.localized("must be a number"))
        }
        guard range.contains(number) else {
            throw fail(key, L.localized("%1$s is out of range %2$s…%3$s", "\(number)", "\(range.lowerBound)", "\(range.upperBound)"))
        }
        return number
    }

    mutating func integer(_ key: String, range: ClosedRange<Int>) throws -> Int? {
        guard let value = raw(key) else { return nil }
        guard !value.isBoolean, let double = value.double else {
            throw fail(key, L.localized("must be an integer"))
        }
        guard double.rounded() == double, let integer = Int(exactly: double) else {
            throw fail(key, L.localized("must be an integer"))
        }
        guard range.contains(integer) else {
            throw fail(key, L.localized("%1$s is out of range %2$s…%3$s", "\(integer)", "\(range.lowerBound)", "\(range.upperBound)"))
        }
        return integer
    }

    /// Throws for the first key (in sorted order) that no reader asked for.
    func rejectUnknownKeys(known: [String], explain: (String) -> String? = { _ in nil }) throws {
        if let unknown = fields.keys.sorted().first(where: { !used.contains($0) }) {
            let list = known.joined(separator: ", ")
            // In the user's words, with the key meant (found by an attack: English in every
            // language, and `CatalogURL` got no hint of `catalogURL`).
            let said = Suggestion.closest(to: unknown, among: known).map { L.localized("unknown key; did you mean \"%1$s\"? (known keys: %2$s)", $0, list) }
            throw fail(unknown, explain(unknown) ?? said ?? L.localized("unknown key (known keys: %1$s)", list))
        }
    }
}
