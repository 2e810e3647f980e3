import Foundation
import MapGate
import TestSupport
import Testing

@Suite struct ConfigurationTests {
    func parse(_ json: String) throws -> Configuration {
        try Configuration.parse(Data(json.utf8), path: "/etc/test.json")
    }

    @Test func everyKeyIsRead() throws {
        let config = try parse(
            """
            {"catalogURL": "file:///srv/catalog.json", "caFile": "/etc/ca.pem", "leafletPath": "/opt/leaflet",
             "maplibrePath": "/opt/maplibre", "fontPaths": ["/opt/fonts", "/home/u/.fonts"]}
            """)
        #expect(config.catalogURL == "file:///srv/catalog.json")
        #expect(config.caFile == "/etc/ca.pem")
        #expect(config.leafletPath == "/opt/leaflet")
        #expect(config.maplibrePath == "/opt/maplibre")
        #expect(config.fontPaths == ["/opt/fonts", "/home/u/.fonts"])
        #expect(Configuration.keys.count == 5)
    }

    @Test func emptyObjectGivesDefaults() throws {
        #expect(try parse("{}") == Configuration())
    }

    @Test(arguments: [
        (#"{"catalogUrl": 3}"#, "catalogUrl", "unknown key"),
        (#"{"catalogURL": "gopher://x/"}"#, "catalogURL", "not an absolute"),
        (#"{"catalogURL": true}"#, "catalogURL", "must be a string"),
        (#"{"caFile": ""}"#, "caFile", "invalid value"),
        (#"{"fontPaths": ["fonts"]}"#, "fontPaths", #"invalid value "fonts": must be an absolute path (starting with /)"#),
        (#"{"fontPaths": "/opt/fonts"}"#, "fontPaths", "must be a list"),
        (#"{"leafletPath": 1}"#, "leafletPath", "must be a string"),
    ])
    func badValueNamesTheKey(json: String, key: String, reason: String) throws {
        let error = #expect(throws: ConfigurationError.self) { try parse(json) }
        #expect(error?.key == key)
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "")")
        #expect(error?.localizedDescription.contains("key \"\(key)\"") == true)
        #expect(error?.kind == .usage)
    }

    /// The gate's rules are the publisher's: each of them in the user's file is an error that
    /// says where it belongs (1.4.0 let `"maxPrompts": 1000` open the gate).
    @Test(arguments: GateSettings.keys.map(\.name).filter { $0 != "catalogURL" })
    func gateKeyInTheUserConfigBelongsToTheManagedPolicy(key: String) throws {
        let error = #expect(throws: ConfigurationError.self) { try parse(#"{"\#(key)": 1000}"#) }
        #expect(error?.key == key)
        #expect(error?.reason.contains("belongs to the managed policy (/etc/mapgate/policy.json)") == true)
    }

    @Test func truncatedJSONSaysWhere() {
        let error = #expect(throws: ConfigurationError.self) { try parse(#"{"catalogURL": "http://x"#) }
        #expect(error?.reason == #"not valid JSON (the text ends before the JSON does (a missing "}", "]" or quote?))"#, "\(error?.reason ?? "")")
    }

    /// Where a hand-edited file stops being JSON, as an editor counts: line and column, in
    /// characters (found by an attack: "Invalid value around character 54.", a byte offset, in
    /// English in every language).
    @Test func badJSONSaysTheLineAndColumn() {
        let error = #expect(throws: ConfigurationError.self) { try parse("{\n  \"catalogURL\": \"地図\",\n  \"caFile\": oops\n}") }
        #expect(error?.reason == "not valid JSON (unexpected text at line 3, column 13)", "\(error?.reason ?? "")")
    }

    /// A key that differs by case or by a slip names the key meant (found by an attack: no hint,
    /// and the reason was English in every language).
    @Test func anUnknownKeyNamesTheKeyMeant() {
        for typed in ["CatalogURL", "catalogUrl", "catlogURL"] {
            let error = #expect(throws: ConfigurationError.self) { try parse(#"{"\#(typed)": "http://x"}"#) }
            #expect(error?.reason.hasPrefix(#"unknown key; did you mean "catalogURL"? (known keys: "#) == true, "\(error?.reason ?? "")")
        }
        let far = #expect(throws: ConfigurationError.self) { try parse(#"{"colour": 1}"#) }
        #expect(far?.reason.hasPrefix("unknown key (known keys: catalogURL, ") == true, "\(far?.reason ?? "")")
    }

    @Test(arguments: ["not json", "[1, 2]", "\"text\""])
    func notAnObjectIsAnError(text: String) {
        let error = #expect(throws: ConfigurationError.self) { try parse(text) }
        #expect(error?.key == nil)
        #expect(error?.localizedDescription.hasPrefix("config /etc/test.json:") == true)
    }

    @Test func missingDefaultFileGivesDefaultsButMissingNamedFileFails() throws {
        let directory = try TemporaryDirectory()
        #expect(try Configuration.load(path: directory.file("none.json"), mustExist: false) == Configuration())
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration.load(path: directory.file("none.json"), mustExist: true)
        }
        #expect(error?.reason == "no such file")
    }

    @Test func locationsFollowFlagThenVariableThenXDG() {
        let env = ["HOME": "/home/u", "XDG_CONFIG_HOME": "/xdg/config", "XDG_DATA_HOME": "/xdg/data"]
        #expect(Locations.configFile(flag: "/a.json", environment: env) == ("/a.json", true))
        #expect(Locations.configFile(flag: nil, environment: env.merging(["MAPGATE_CONFIG": "/b.json"]) { $1 }) == ("/b.json", true))
        #expect(Locations.configFile(flag: nil, environment: env) == ("/xdg/config/mapgate/config.json", false))
        #expect(Locations.configFile(flag: nil, environment: ["HOME": "/home/u"]) == ("/home/u/.config/mapgate/config.json", false))
        #expect(Locations.dataDirectory(flag: "/d", environment: env).path == "/d")
        #expect(Locations.dataDirectory(flag: nil, environment: env.merging(["MAPGATE_DATA_DIR": "/e"]) { $1 }).path == "/e")
        #expect(Locations.dataDirectory(flag: nil, environment: env).path == "/xdg/data/mapgate")
        #expect(Locations.dataDirectory(flag: nil, environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/mapgate")
        #expect(Locations.stateFolder(environment: ["HOME": "/home/u", "XDG_STATE_HOME": "/xdg/state"]) == "/xdg/state/mapgate")
        #expect(Locations.stateFolder(environment: ["HOME": "/home/u"]) == "/home/u/.local/state/mapgate")
        #expect(Locations.policyFile(environment: [:]) == ("/etc/mapgate/policy.json", false))
        #expect(Locations.policyFile(environment: ["MAPGATE_POLICY": "/p.json"]) == ("/p.json", true))
    }
}
