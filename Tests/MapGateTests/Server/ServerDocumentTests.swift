import Foundation
import MapGate
import Testing

/// The server's JSON documents byte for byte (issue 28: one Codable type per wire format, with
/// snapshots, as the catalog and TileJSON have): keys sorted, slashes as they are, a nil left out,
/// text from outside (a region's name) escaped as JSON requires and nothing more.
@Suite struct ServerDocumentTests {
    func text(_ document: some Encodable) throws -> String { String(decoding: try ServerDocument.encode(document), as: UTF8.self) }

    /// `/fonts.json` is a plain array of the font names, encoded as the other documents.
    @Test func fontList() throws {
        #expect(try text(["DejaVu Sans Book", "Noto Sans CJK JP Regular", "a/b \"quoted\""]) == #"["DejaVu Sans Book","Noto Sans CJK JP Regular","a/b \"quoted\""]"#)
        #expect(try text([String]()) == "[]")
    }

    @Test func health() throws {
        let open = ServerDocument.Health(status: "ok", gate: "open", regions: 2)
        #expect(try text(open) == #"{"gate":"open","regions":2,"status":"ok"}"#)
        var degraded = ServerDocument.Health(
            status: "degraded", gate: "open", regions: 1, damaged: [.init(id: "b", reason: "its file is missing")], usesLeft: 3)
        #expect(try text(degraded) == #"{"damaged":[{"id":"b","reason":"its file is missing"}],"gate":"open","regions":1,"status":"degraded","usesLeft":3}"#)
        degraded = ServerDocument.Health(status: "refusing", gate: "closed", regions: 1, requiredVersion: "1.5.0")
        #expect(try text(degraded) == #"{"gate":"closed","regions":1,"requiredVersion":"1.5.0","status":"refusing"}"#)
        let failing = ServerDocument.Health(status: "refusing", gate: "failing", regions: 0, message: "state \"x\" unreadable")
        #expect(try text(failing) == #"{"gate":"failing","message":"state \"x\" unreadable","regions":0,"status":"refusing"}"#)
    }

    @Test func index() throws {
        let index = ServerDocument.Index(
            regions: [
                .init(id: "seoul", name: "서울 / Seoul", version: "2026.11", format: "pbf", tilejson: "http://h:1/seoul.json", viewer: "http://h:1/view/seoul")
            ],
            styles: [.init(id: "night", name: "Night", regions: ["seoul"], url: "http://h:1/styles/night/style.json", viewer: "http://h:1/view/seoul#style=night")])
        #expect(
            try text(index)
                == #"{"regions":[{"format":"pbf","id":"seoul","name":"서울 / Seoul","tilejson":"http://h:1/seoul.json","version":"2026.11","viewer":"http://h:1/view/seoul"}],"styles":[{"id":"night","name":"Night","regions":["seoul"],"url":"http://h:1/styles/night/style.json","viewer":"http://h:1/view/seoul#style=night"}]}"#)
        #expect(try text(ServerDocument.Index(regions: [], styles: [])) == #"{"regions":[],"styles":[]}"#)
    }

    @Test func styleList() throws {
        let list = ServerDocument.StyleList(styles: [.init(id: "night", name: "Night\n", version: "3f2a9c0b1d4e", regions: ["a", "b"], url: "http://h:1/styles/night/style.json")])
        #expect(try text(list) == #"{"styles":[{"id":"night","name":"Night\n","regions":["a","b"],"url":"http://h:1/styles/night/style.json","version":"3f2a9c0b1d4e"}]}"#)
    }

    /// A JSON route's answer while the gate refuses: an update-required one always names the store
    /// (`null` when there is none), as the `[String: Any]` it replaced did.
    @Test func refusal() throws {
        #expect(
            try text(ServerDocument.Refusal.gateUnavailable(message: "the update gate cannot be checked (x); tiles are withheld until it can"))
                == #"{"error":"gate-unavailable","message":"the update gate cannot be checked (x); tiles are withheld until it can"}"#)
        #expect(
            try text(ServerDocument.Refusal.updateRequired(message: "update required", requiredVersion: "1.5.0", storeURL: "https://apps.example/mapgate"))
                == #"{"error":"update-required","message":"update required","requiredVersion":"1.5.0","storeURL":"https://apps.example/mapgate"}"#)
        #expect(
            try text(ServerDocument.Refusal.updateRequired(message: "update required", requiredVersion: "1.5.0", storeURL: nil))
                == #"{"error":"update-required","message":"update required","requiredVersion":"1.5.0","storeURL":null}"#)
    }

    /// What `/health` answered before it had a type of its own decodes into it: no key was lost.
    @Test func decodesWhatTheServerAnswers() throws {
        let old = Data(#"{"gate":"open","regions":2,"status":"ok","usesLeft":5}"#.utf8)
        #expect(try JSONDecoder().decode(ServerDocument.Health.self, from: old) == ServerDocument.Health(status: "ok", gate: "open", regions: 2, usesLeft: 5))
    }
}
