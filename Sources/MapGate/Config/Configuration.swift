import Foundation

/// mapgate's settings, read from a JSON file. Every key is optional; unknown keys are errors.
public struct Configuration: Sendable, Equatable {
    /// The App Store id (`trackId`) of the app, looked up as `?id=`.
    public var appID: Int?
    /// The bundle id of the app, looked up as `?bundleId=` when `appID` is not set.
    public var bundleID: String?
    /// The two-letter storefront code.
    public var country: String = "us"
    /// The iTunes Lookup endpoint.
    public var lookupURL: String = "https://itunes.apple.com/lookup"
    /// The publisher's catalog of map regions.
    public var catalogURL: String?
    /// Days after a newer version is first seen before the prompts start.
    public var graceDays: Int = 30
    /// Prompts shown (uses counted) after the grace period before the gate closes.
    public var maxPrompts: Int = 5
    /// Hours between store lookups on ordinary runs.
    public var checkIntervalHours: Double = 24
    /// A CA bundle (PEM) to trust instead of the system's, for HTTPS to a private origin.
    public var caFile: String?
    /// Where Debian's `libjs-leaflet` puts Leaflet, for the viewer page.
    public var leafletPath: String = "/usr/share/javascript/leaflet"

    public init() {}

    /// Every key with its type and meaning, for `--help` and the README.
    public static let keys: [(name: String, type: String, summary: String)] = [
        ("appID", "integer", "App Store id of the app (looked up as ?id=)"),
        ("bundleID", "string", "bundle id of the app (looked up as ?bundleId= when appID is unset)"),
        ("country", "string", "two-letter storefront code (default \"us\")"),
        ("lookupURL", "string", "iTunes Lookup endpoint (default https://itunes.apple.com/lookup)"),
        ("catalogURL", "string", "URL of the publisher's region catalog (http, https or file)"),
        ("graceDays", "integer", "days after a newer version appears before prompts start (default 30)"),
        ("maxPrompts", "integer", "prompted uses before the gate closes (default 5)"),
        ("checkIntervalHours", "number", "hours between store lookups on ordinary runs (default 24)"),
        ("caFile", "string", "PEM CA bundle trusted instead of the system's for HTTPS"),
        ("leafletPath", "string", "folder holding leaflet.js and leaflet.css (default from libjs-leaflet)"),
    ]
}

/// A configuration file that cannot be used. Always names the key or the file.
public struct ConfigurationError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let path: String
    public let key: String?
    public let reason: String
    public var kind: FailureKind { .usage }
    public var errorDescription: String? {
        if let key { return "config \(path): key \"\(key)\": \(reason)" }
        return "config \(path): \(reason)"
    }
}

extension Configuration {
    /// Reads a configuration file. A missing file is an error only when `mustExist`.
    public static func load(path: String, mustExist: Bool) throws -> Configuration {
        guard FileManager.default.fileExists(atPath: path) else {
            if mustExist { throw ConfigurationError(path: path, key: nil, reason: "no such file") }
            return Configuration()
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(path: path, key: nil, reason: "cannot be read")
        }
        return try parse(data, path: path)
    }

    /// Parses and validates the JSON text of a configuration file.
    public static func parse(_ data: Data, path: String) throws -> Configuration {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError(path: path, key: nil, reason: "not valid JSON")
        }
        guard let fields = object as? [String: Any] else {
            throw ConfigurationError(path: path, key: nil, reason: "must be a JSON object")
        }
        var reader = FieldReader(path: path, fields: fields)
        var config = Configuration()
        config.appID = try reader.integer("appID", range: 1...Int.max)
        config.bundleID = try reader.string("bundleID") { !$0.isEmpty && !$0.contains(where: \.isWhitespace) }
        config.country = try reader.string("country") { $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isLetter) }?
            .lowercased() ?? config.country
        config.lookupURL = try reader.url("lookupURL", schemes: ["http", "https"]) ?? config.lookupURL
        config.catalogURL = try reader.url("catalogURL", schemes: ["http", "https", "file"])
        config.graceDays = try reader.integer("graceDays", range: 0...3650) ?? config.graceDays
        config.maxPrompts = try reader.integer("maxPrompts", range: 0...1000) ?? config.maxPrompts
        config.checkIntervalHours = try reader.number("checkIntervalHours", range: 0...8760) ?? config.checkIntervalHours
        config.caFile = try reader.string("caFile") { !$0.isEmpty }
        config.leafletPath = try reader.string("leafletPath") { !$0.isEmpty } ?? config.leafletPath
        try reader.rejectUnknownKeys()
        return config
    }
}

/// Reads typed fields of a JSON object, remembering which keys were used.
private struct FieldReader {
    let path: String
    let fields: [String: Any]
    var used: Set<String> = []

    init(path: String, fields: [String: Any]) {
        self.path = path
        self.fields = fields
    }

    private func fail(_ key: String, _ reason: String) -> ConfigurationError {
        ConfigurationError(path: path, key: key, reason: reason)
    }

    /// The raw value, or nil when absent or JSON null. JSON booleans are told apart from numbers.
    private mutating func raw(_ key: String) -> Any? {
        used.insert(key)
        guard let value = fields[key], !(value is NSNull) else { return nil }
        return value
    }

    private func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    mutating func string(_ key: String, valid: (String) -> Bool) throws -> String? {
        guard let value = raw(key) else { return nil }
        guard let text = value as? String else { throw fail(key, "must be a string") }
        guard valid(text) else { throw fail(key, "invalid value \"\(text)\"") }
        return text
    }

    mutating func url(_ key: String, schemes: Set<String>) throws -> String? {
        guard let text = try string(key, valid: { _ in true }) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
            scheme == "file" || url.host?.isEmpty == false
        else {
            throw fail(key, "\"\(text)\" is not an absolute \(schemes.sorted().joined(separator: "/")) URL")
        }
        return text
    }

    mutating func number(_ key: String, range: ClosedRange<Double>) throws -> Double? {
        guard let value = raw(key) else { return nil }
        guard !(value is String), !isBoolean(value), let number = (value as? NSNumber)?.doubleValue else {
            throw fail(key, "must be a number")
        }
        guard range.contains(number) else {
            throw fail(key, "\(number) is out of range \(range.lowerBound)…\(range.upperBound)")
        }
        return number
    }

    mutating func integer(_ key: String, range: ClosedRange<Int>) throws -> Int? {
        guard let value = raw(key) else { return nil }
        guard !(value is String), !isBoolean(value), let number = value as? NSNumber else {
            throw fail(key, "must be an integer")
        }
        let double = number.doubleValue
        guard double.rounded() == double, let integer = Int(exactly: double) else {
            throw fail(key, "must be an integer")
        }
        guard range.contains(integer) else {
            throw fail(key, "\(integer) is out of range \(range.lowerBound)…\(range.upperBound)")
        }
        return integer
    }

    func rejectUnknownKeys() throws {
        if let unknown = fields.keys.sorted().first(where: { !used.contains($0) }) {
            let known = Configuration.keys.map(\.name).joined(separator: ", ")
            throw fail(unknown, "unknown key (known keys: \(known))")
        }
    }
}
