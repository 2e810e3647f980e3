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
            {"appID": 284882215, "bundleID": "com.example.maps", "country": "KR",
             "lookupURL": "http://127.0.0.1:9/lookup", "catalogURL": "file:///srv/catalog.json",
             "graceDays": 10, "maxPrompts": 3, "checkIntervalHours": 1.5, "caFile": "/etc/ca.pem",
             "leafletPath": "/opt/leaflet"}
            """)
        #expect(config.appID == 284_882_215)
        #expect(config.bundleID == "com.example.maps")
        #expect(config.country == "kr")
        #expect(config.lookupURL == "http://127.0.0.1:9/lookup")
        #expect(config.catalogURL == "file:///srv/catalog.json")
        #expect(config.graceDays == 10)
        #expect(config.maxPrompts == 3)
        #expect(config.checkIntervalHours == 1.5)
        #expect(config.caFile == "/etc/ca.pem")
        #expect(config.leafletPath == "/opt/leaflet")
        #expect(Configuration.keys.count == 10)
    }

    @Test func emptyObjectGivesDefaults() throws {
        let config = try parse("{}")
        #expect(config == Configuration())
        #expect(config.graceDays == 30)
        #expect(config.maxPrompts == 5)
        #expect(config.checkIntervalHours == 24)
        #expect(config.lookupURL == "https://itunes.apple.com/lookup")
    }

    @Test(arguments: [
        (#"{"graceDay": 3}"#, "graceDay", "unknown key"),
        (#"{"graceDays": "30"}"#, "graceDays", "must be an integer"),
        (#"{"graceDays": 2.5}"#, "graceDays", "must be an integer"),
        (#"{"graceDays": true}"#, "graceDays", "must be an integer"),
        (#"{"graceDays": -1}"#, "graceDays", "out of range"),
        (#"{"maxPrompts": 1e9}"#, "maxPrompts", "out of range"),
        (#"{"country": "usa"}"#, "country", "invalid value"),
        (#"{"country": "1a"}"#, "country", "invalid value"),
        (#"{"country": 12}"#, "country", "must be a string"),
        (#"{"lookupURL": "ftp://example.com/lookup"}"#, "lookupURL", "not an absolute"),
        (#"{"lookupURL": "itunes.apple.com/lookup"}"#, "lookupURL", "not an absolute"),
        (#"{"catalogURL": "gopher://x/"}"#, "catalogURL", "not an absolute"),
        (#"{"checkIntervalHours": "daily"}"#, "checkIntervalHours", "must be a number"),
        (#"{"appID": 0}"#, "appID", "out of range"),
        (#"{"bundleID": "has space"}"#, "bundleID", "invalid value"),
    ])
    func badValueNamesTheKey(json: String, key: String, reason: String) throws {
        let error = #expect(throws: ConfigurationError.self) { try parse(json) }
        #expect(error?.key == key)
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "")")
        #expect(error?.localizedDescription.contains("key \"\(key)\"") == true)
        #expect(error?.kind == .usage)
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
    }
}
