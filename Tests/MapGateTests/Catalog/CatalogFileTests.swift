import Foundation
import MapGate
@testable import MapGateTrust
import Testing

/// The catalog's wire format: what `publish` writes is exactly these bytes (the catalog is
/// signed, so they must not drift), and what `sync` reads back is what was written.
@Suite struct CatalogFileTests {
    static let hash = String(repeating: "ab", count: 32)

    static let file = CatalogFile(
        publisher: "Example Maps", generated: "2026-11-01T00:00:00Z", expires: "2026-12-01T00:00:00Z", serial: 7,
        gate: PublisherGate(graceDays: 14),
        regions: [
            CatalogFile.Region(
                id: "kr-seoul", name: "Seoul", version: "2026.11", url: "packages/kr-seoul-2026.11.mbtiles.gz", size: 1000, sha256: hash,
                installedSize: 4000, format: "pbf", bounds: [126.76, 37.41, 127.18, 37.7], minzoom: 0, maxzoom: 14, minimumAppVersion: nil,
                contentHash: "0123456789ABCDEF0123456789ABCDEF",
                deltas: [
                    .valid(
                        CatalogFile.Delta(
                            fromVersion: "2026.10", fromHash: "FEDCBA9876543210FEDCBA9876543210",
                            url: "packages/kr-seoul-2026.10-to-2026.11.delta.mbtiles.gz", size: 100, sha256: hash))
                ])
        ],
        styles: [
            CatalogFile.Style(
                id: "night", name: "Night", version: "0123456789ab", url: "packages/night-0123456789ab.style.json.gz", size: 900,
                sha256: hash, installedSize: 3000, regions: ["kr-seoul"])
        ])

    static let snapshot = """
        {
          "expires" : "2026-12-01T00:00:00Z",
          "formatVersion" : 1,
          "gate" : {
            "graceDays" : 14
          },
          "generated" : "2026-11-01T00:00:00Z",
          "publisher" : "Example Maps",
          "regions" : [
            {
              "bounds" : [
                126.76,
                37.41,
                127.18,
                37.7
              ],
              "contentHash" : "0123456789ABCDEF0123456789ABCDEF",
              "deltas" : [
                {
                  "fromHash" : "FEDCBA9876543210FEDCBA9876543210",
                  "fromVersion" : "2026.10",
                  "sha256" : "\(hash)",
                  "size" : 100,
                  "url" : "packages/kr-seoul-2026.10-to-2026.11.delta.mbtiles.gz"
                }
              ],
              "format" : "pbf",
              "id" : "kr-seoul",
              "installedSize" : 4000,
              "maxzoom" : 14,
              "minzoom" : 0,
              "name" : "Seoul",
              "sha256" : "\(hash)",
              "size" : 1000,
              "url" : "packages/kr-seoul-2026.11.mbtiles.gz",
              "version" : "2026.11"
            }
          ],
          "serial" : 7,
          "styles" : [
            {
              "id" : "night",
              "installedSize" : 3000,
              "name" : "Night",
              "regions" : [
                "kr-seoul"
              ],
              "sha256" : "\(hash)",
              "size" : 900,
              "url" : "packages/night-0123456789ab.style.json.gz",
              "version" : "0123456789ab"
            }
          ]
        }

        """

    @Test func publishWritesTheseBytes() throws {
        #expect(String(decoding: try Self.file.encoded(), as: UTF8.self) == Self.snapshot)
    }

    @Test func whatIsWrittenIsReadBack() throws {
        let bytes = try Self.file.encoded()
        #expect(try JSONDecoder().decode(CatalogFile.self, from: bytes) == Self.file)
        let catalog = try Catalog.parse(bytes, sourceURL: "https://maps.example/catalog.json")
        let region = try #require(catalog.region("kr-seoul"))
        #expect(region.url == "https://maps.example/packages/kr-seoul-2026.11.mbtiles.gz")
        #expect(region.deltas.first?.fromVersion == "2026.10")
        #expect(region.bounds == [126.76, 37.41, 127.18, 37.7])
        #expect(catalog.styles.first?.regions == ["kr-seoul"])
        #expect(catalog.gate == PublisherGate(graceDays: 14))
        #expect(catalog.serial == 7)
        #expect(catalog.rejected.isEmpty && catalog.rejectedStyles.isEmpty)
    }
}
