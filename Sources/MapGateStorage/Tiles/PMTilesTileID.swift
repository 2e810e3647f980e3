/// PMTiles v3 tile ids: the tiles of all lower zooms first (`(4^z − 1) / 3` of them), then the
/// tile's place on the Hilbert curve of its zoom. XYZ coordinates (y from the north).
public enum PMTilesTileID {
    /// How many tiles all zooms below `z` have together.
    static func firstID(ofZoom z: Int) -> UInt64 { ((UInt64(1) << (2 * UInt64(z))) - 1) / 3 }

    /// The id of tile `z/x/y`; nil outside `0...maximumZoom` or the zoom's `2^z` grid.
    public static func id(z: Int, x: Int, y: Int) -> UInt64? {
        guard TileCoordinate(z: z, x: x, y: y) != nil else { return nil }
        var tx = UInt64(x)
        var ty = UInt64(y)
        var distance: UInt64 = 0
        let size = UInt64(1) << UInt64(z)
        var half = size >> 1
        while half > 0 {
            let rx: UInt64 = tx & half != 0 ? 1 : 0
            let ry: UInt64 = ty & half != 0 ? 1 : 0
            distance += half * half * ((3 * rx) ^ ry)
            rotate(size, &tx, &ty, rx, ry)
            half >>= 1
        }
        return firstID(ofZoom: z) + distance
    }

    /// The tile an id stands for; nil beyond ``TileCoordinate/maximumZoom``.
    public static func coordinate(of id: UInt64) -> TileCoordinate? {
        var z = 0
        while z <= TileCoordinate.maximumZoom, firstID(ofZoom: z + 1) <= id { z += 1 }
        guard z <= TileCoordinate.maximumZoom else { return nil }
        var t = id - firstID(ofZoom: z)
        let size = UInt64(1) << UInt64(z)
        var x: UInt64 = 0
        var y: UInt64 = 0
        var step: UInt64 = 1
        while step < size {
            let rx = 1 & (t / 2)
            let ry = 1 & (t ^ rx)
            rotate(step, &x, &y, rx, ry)
            x += step * rx
            y += step * ry
            t /= 4
            step *= 2
        }
        return TileCoordinate(z: z, x: Int(x), y: Int(y))
    }

    private static func rotate(_ n: UInt64, _ x: inout UInt64, _ y: inout UInt64, _ rx: UInt64, _ ry: UInt64) {
        guard ry == 0 else { return }
        if rx == 1 {
            x = n &- 1 &- x
            y = n &- 1 &- y
        }
        swap(&x, &y)
    }
}
