import CZlib
import Foundation

/// Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are), so a test
/// can look at pixels.
public struct PNGImage {
    public let width: Int
    public let height: Int
    /// RGBA, row by row.
    public let pixels: [UInt8]

    public struct DecodeError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(contentsOf path: String) throws {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard data.count > 8, data.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw DecodeError(description: "\(path) is not a PNG") }
        var offset = 8
        var width = 0, height = 0, colorType = 0
        var compressed: [UInt8] = []
        while offset + 8 <= data.count {
            let length = data[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let kind = String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = Array(data[(offset + 8)..<min(data.count, offset + 8 + length)])
            switch kind {
            case "IHDR":
                width = body[0..<4].reduce(0) { $0 << 8 | Int($1) }
                height = body[4..<8].reduce(0) { $0 << 8 | Int($1) }
                colorType = Int(body[9])
                guard body[8] == 8, colorType == 2 || colorType == 6, body[12] == 0 else {
                    throw DecodeError(description: "unsupported PNG: depth \(body[8]), colour type \(colorType), interlace \(body[12])")
                }
            case "IDAT": compressed += body
            default: break
            }
            offset += 12 + length
        }
        let channels = colorType == 6 ? 4 : 3
        let stride = width * channels
        var raw = [UInt8](repeating: 0, count: (stride + 1) * height)
        var rawLength = uLongf(raw.count)
        let status = uncompress(&raw, &rawLength, compressed, uLong(compressed.count))
        guard status == Z_OK else { throw DecodeError(description: "zlib error \(status)") }
        var rows = [UInt8](repeating: 0, count: stride * height)
        for y in 0..<height {
            let filter = raw[y * (stride + 1)]
            for x in 0..<stride {
                let value = raw[y * (stride + 1) + 1 + x]
                let a = x >= channels ? Int(rows[y * stride + x - channels]) : 0
                let b = y > 0 ? Int(rows[(y - 1) * stride + x]) : 0
                let c = x >= channels && y > 0 ? Int(rows[(y - 1) * stride + x - channels]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = (a + b) / 2
                case 4:
                    let p = a + b - c
                    let (pa, pb, pc) = (abs(p - a), abs(p - b), abs(p - c))
                    predictor = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: throw DecodeError(description: "bad filter \(filter)")
                }
                rows[y * stride + x] = UInt8(truncatingIfNeeded: Int(value) + predictor)
            }
        }
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for index in 0..<(width * height) {
            for channel in 0..<channels { rgba[index * 4 + channel] = rows[index * channels + channel] }
        }
        self.width = width
        self.height = height
        pixels = rgba
    }

    /// The share of pixels within `tolerance` of one of `colors`.
    public func fraction(near colors: [(UInt8, UInt8, UInt8)], tolerance: Int = 12) -> Double {
        var count = 0
        for index in 0..<(width * height) {
            let (r, g, b) = (Int(pixels[index * 4]), Int(pixels[index * 4 + 1]), Int(pixels[index * 4 + 2]))
            if colors.contains(where: { abs(Int($0.0) - r) <= tolerance && abs(Int($0.1) - g) <= tolerance && abs(Int($0.2) - b) <= tolerance }) {
                count += 1
            }
        }
        return Double(count) / Double(max(1, width * height))
    }

    /// How many pixels within `tolerance` of `color` lie within `radius` pixels (a square) of a
    /// pixel within `anchorTolerance` of `anchor`: text drawn beside points, say.
    public func count(near color: (UInt8, UInt8, UInt8), tolerance: Int, within radius: Int, of anchor: (UInt8, UInt8, UInt8), anchorTolerance: Int) -> Int {
        func matches(_ index: Int, _ c: (UInt8, UInt8, UInt8), _ t: Int) -> Bool {
            abs(Int(pixels[index * 4]) - Int(c.0)) <= t && abs(Int(pixels[index * 4 + 1]) - Int(c.1)) <= t
                && abs(Int(pixels[index * 4 + 2]) - Int(c.2)) <= t
        }
        // A summed-area table of the anchors answers "any anchor in this square?" at once.
        var sums = [Int](repeating: 0, count: (width + 1) * (height + 1))
        for y in 0..<height {
            for x in 0..<width {
                let here = matches(y * width + x, anchor, anchorTolerance) ? 1 : 0
                sums[(y + 1) * (width + 1) + x + 1] = here + sums[y * (width + 1) + x + 1] + sums[(y + 1) * (width + 1) + x] - sums[y * (width + 1) + x]
            }
        }
        var count = 0
        for y in 0..<height {
            for x in 0..<width where matches(y * width + x, color, tolerance) {
                let (x0, y0, x1, y1) = (max(0, x - radius), max(0, y - radius), min(width, x + radius + 1), min(height, y + radius + 1))
                let anchors = sums[y1 * (width + 1) + x1] - sums[y0 * (width + 1) + x1] - sums[y1 * (width + 1) + x0] + sums[y0 * (width + 1) + x0]
                if anchors > 0 { count += 1 }
            }
        }
        return count
    }
}
