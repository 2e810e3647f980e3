import Foundation

/// The PMTiles reference implementation, python's `pmtiles` package (unpacked by
/// `scripts/install-deps` beside mbutil), run as a subprocess: what the PMTiles tests compare
/// mapgate's reader and writer with.
public enum PMTilesReference {
    /// Where `scripts/install-deps` unpacks the python writers' wheels.
    public static let pythonPath = "/usr/local/lib/mapgate-test-tools/python"

    public static var isInstalled: Bool { FileManager.default.fileExists(atPath: pythonPath + "/pmtiles/reader.py") }

    static func python(_ script: String, _ arguments: [String]) throws -> ProcessResult {
        let result = try runProcess("/usr/bin/python3", ["-c", script] + arguments, environment: ["PYTHONPATH": pythonPath], timeout: 300)
        guard result.status == 0 else { throw ReferenceFailure(description: "python pmtiles: \(result.stderr)") }
        return result
    }

    /// Every tile the reference reader finds in `archive`, by `z/x/y` (XYZ).
    public static func tiles(_ archive: String) throws -> [String: Data] {
        let script = """
            import sys, json, base64
            from pmtiles.reader import MmapSource, all_tiles
            with open(sys.argv[1], 'rb') as f:
                out = {}
                for (z, x, y), data in all_tiles(MmapSource(f)):
                    out['%d/%d/%d' % (z, x, y)] = base64.b64encode(data).decode()
            print(json.dumps(out))
            """
        let result = try python(script, [archive])
        let decoded = try JSONDecoder().decode([String: String].self, from: result.stdoutData)
        return decoded.compactMapValues { Data(base64Encoded: $0) }
    }

    /// The reference reader's header and metadata of `archive`, as JSON text.
    public static func headerAndMetadata(_ archive: String) throws -> (header: [String: Any], metadata: [String: Any]) {
        let script = """
            import sys, json
            from pmtiles.reader import MmapSource, Reader
            with open(sys.argv[1], 'rb') as f:
                r = Reader(MmapSource(f))
                h = {k: (v.value if hasattr(v, 'value') else v) for k, v in r.header().items()}
                print(json.dumps({'header': h, 'metadata': r.metadata()}))
            """
        let result = try python(script, [archive])
        let object = try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any] ?? [:]
        return (object["header"] as? [String: Any] ?? [:], object["metadata"] as? [String: Any] ?? [:])
    }

    /// `pmtiles-convert` MBTiles → PMTiles (the reference writer).
    public static func convert(mbtiles: String, to archive: String) throws {
        _ = try python("import sys; from pmtiles.convert import mbtiles_to_pmtiles; mbtiles_to_pmtiles(sys.argv[1], sys.argv[2], None)", [mbtiles, archive])
    }

    public struct ReferenceFailure: Error, CustomStringConvertible {
        public let description: String
    }
}
