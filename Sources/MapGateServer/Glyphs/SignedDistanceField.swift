/// A signed distance field from a glyph's coverage bitmap, as MapLibre's glyphs expect it: each
/// byte says how far the pixel is from the outline, 192 on it (`cutoff` 0.25), more inside, less
/// outside, `radius` pixels of distance spread over the byte's range.
///
/// The outline is placed with sub-pixel precision from the anti-aliased coverage, then two
/// Euclidean distance transforms (Felzenszwalb and Huttenlocher's, exact, linear time) give the
/// distance outside and inside, as tiny-sdf and fontnik compute it.
enum SignedDistanceField {
    static let buffer = 3
    static let radius = 8.0
    static let cutoff = 0.25

    /// - Parameters:
    ///   - coverage: `width × height` bytes, 0 (empty) to 255 (covered), row by row.
    /// - Returns: `(width + 2 × buffer) × (height + 2 × buffer)` bytes.
    static func make(coverage: [UInt8], width: Int, height: Int) -> [UInt8] {
        let paddedWidth = width + 2 * buffer
        let paddedHeight = height + 2 * buffer
        let count = paddedWidth * paddedHeight
        let infinity = 1e20
        var outer = [Double](repeating: infinity, count: count)
        var inner = [Double](repeating: 0, count: count)
        for y in 0..<height {
            for x in 0..<width {
                let alpha = Double(coverage[y * width + x]) / 255
                guard alpha > 0 else { continue }
                let index = (y + buffer) * paddedWidth + x + buffer
                if alpha >= 1 {
                    outer[index] = 0
                    inner[index] = infinity
                } else {
                    let d = 0.5 - alpha
                    outer[index] = d > 0 ? d * d : 0
                    inner[index] = d < 0 ? d * d : 0
                }
            }
        }
        transform(&outer, width: paddedWidth, height: paddedHeight)
        transform(&inner, width: paddedWidth, height: paddedHeight)
        var out = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            let distance = outer[index].squareRoot() - inner[index].squareRoot()
            let value = (255 - 255 * (distance / radius + cutoff)).rounded()
            out[index] = UInt8(max(0, min(255, value)))
        }
        return out
    }

    /// The 2-D squared distance transform, in place: columns, then rows.
    private static func transform(_ grid: inout [Double], width: Int, height: Int) {
        let longest = max(width, height)
        var f = [Double](repeating: 0, count: longest)
        var v = [Int](repeating: 0, count: longest)
        var z = [Double](repeating: 0, count: longest + 1)
        var d = [Double](repeating: 0, count: longest)
        for x in 0..<width {
            for y in 0..<height { f[y] = grid[y * width + x] }
            transform1D(f, n: height, v: &v, z: &z, d: &d)
            for y in 0..<height { grid[y * width + x] = d[y] }
        }
        for y in 0..<height {
            for x in 0..<width { f[x] = grid[y * width + x] }
            transform1D(f, n: width, v: &v, z: &z, d: &d)
            for x in 0..<width { grid[y * width + x] = d[x] }
        }
    }

    /// Felzenszwalb and Huttenlocher's 1-D transform of `f[0..<n]` into `d`: the lower envelope
    /// of the parabolas rooted at each sample.
    private static func transform1D(_ f: [Double], n: Int, v: inout [Int], z: inout [Double], d: inout [Double]) {
        guard n > 0 else { return }
        var k = 0
        v[0] = 0
        z[0] = -.infinity
        z[1] = .infinity
        for q in 1..<max(n, 1) where n > 1 {
            var s: Double
            repeat {
                let r = v[k]
                s = (f[q] - f[r] + Double(q * q - r * r)) / Double(2 * (q - r))
                if s <= z[k] { k -= 1 } else { break }
            } while k >= 0
            k += 1
            v[k] = q
            z[k] = s
            z[k + 1] = .infinity
        }
        k = 0
        for q in 0..<n {
            while z[k + 1] < Double(q) { k += 1 }
            let r = v[k]
            d[q] = Double((q - r) * (q - r)) + f[r]
        }
    }
}
