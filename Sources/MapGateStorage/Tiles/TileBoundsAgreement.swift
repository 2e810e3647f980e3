import FoundationEssentials
import Glibc

/// Which reading of a file's tile rows agrees with its `bounds` (issue 38): TMS rows (MBTiles'
/// own, `row = 2^z - 1 - y`) or XYZ rows. A file whose `scheme` says one thing while its rows and
/// bounds say the other gets advice that fixes it, never advice that breaks a correct file.
public struct TileBoundsAgreement: Sendable, Equatable {
    /// Every sampled tile lies (at least partly) inside the bounds when the rows are read as TMS.
    public var tmsAgrees: Bool
    /// The same with the rows read as XYZ.
    public var xyzAgrees: Bool
    /// Some tile lies inside the bounds when read as TMS.
    public var anyTMSInside: Bool

    /// `addresses`: tiles as stored (zoom, column, row); `bounds`: `[west, south, east, north]`.
    public init(addresses: [(z: Int, x: Int, row: Int)], bounds: [Double]) {
        func inside(_ z: Int, _ x: Int, _ y: Int) -> Bool {
            guard bounds.count == 4 else { return true }
            let extent = Self.extent(z: z, x: x, y: y)
            let epsilon = 1e-9
            let latitudes = extent[1] <= bounds[3] + epsilon && extent[3] >= bounds[1] - epsilon
            func overlaps(_ west: Double, _ east: Double) -> Bool { extent[0] <= east + epsilon && extent[2] >= west - epsilon }
            // Bounds across the antimeridian (west east of east) are two spans of longitude, each
            // judged (found by an attack: they were not judged at all, and a Korean raster with
            // Fiji's bounds was published).
            let longitudes = bounds[0] <= bounds[2] ? overlaps(bounds[0], bounds[2]) : overlaps(bounds[0], 180) || overlaps(-180, bounds[2])
            return latitudes && longitudes
        }
        let tms = addresses.map { inside($0.z, $0.x, (1 << $0.z) - 1 - $0.row) }
        let xyz = addresses.map { inside($0.z, $0.x, $0.row) }
        tmsAgrees = tms.allSatisfy { $0 }
        xyzAgrees = xyz.allSatisfy { $0 }
        anyTMSInside = addresses.isEmpty || tms.contains(true)
    }

    /// `[west, south, east, north]` of the XYZ tile z/x/y in degrees (Web Mercator).
    public static func extent(z: Int, x: Int, y: Int) -> [Double] {
        let n = Double(1 << z)
        func latitude(_ row: Double) -> Double { atan(sinh(Double.pi * (1 - 2 * row / n))) * 180 / Double.pi }
        return [Double(x) / n * 360 - 180, latitude(Double(y + 1)), Double(x + 1) / n * 360 - 180, latitude(Double(y))]
    }
}
