import FoundationEssentials
import MapGateBase
import MapGateTrust

/// The catalog already in the output folder, as `publish` left it last time.
struct PreviousCatalog {
    var file: CatalogFile
    var bytes: Data
    /// Each region's entry by id.
    var regions: [String: CatalogFile.Region]
    /// Each style's entry by id.
    var styles: [String: CatalogFile.Style]
    var serial: Int64? { file.serial }
    /// The style packages it names (under `packages/`).
    var stylePackages: Set<String> {
        Set(styles.values.compactMap { $0.url.split(separator: "/").last.map(String.init) })
    }

    static func load(path: String) throws -> PreviousCatalog? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes: Data
        do {
            bytes = try PublishHistory.readRegularFile(path)
        } catch let error as PublishError {
            throw error
        } catch {
            throw PublishError(path, L.localized("cannot read it: %1$s", "\(errorMessage(error))"), kind: .io)
        }
        guard let file = try? JSONDecoder().decode(CatalogFile.self, from: bytes) else {
            throw PublishError(path, L.localized("not a catalog mapgate can read: put back the one last published (its serial and gate rules go on from it), or move it away and publish with --serial above the last serial published"))
        }
        let regions = file.regions.compactMap(\.value)
        let styles = (file.styles ?? []).compactMap(\.value)
        return PreviousCatalog(
            file: file, bytes: bytes, regions: Dictionary(regions.map { ($0.id, $0) }) { first, _ in first },
            styles: Dictionary(styles.map { ($0.id, $0) }) { first, _ in first })
    }
}
