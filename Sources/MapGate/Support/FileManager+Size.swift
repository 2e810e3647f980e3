import Foundation

extension FileManager {
    /// The size in bytes of the file at `path` (a link's target's), 0 when it cannot be read.
    func sizeOfItem(atPath path: String) -> Int64 {
        (try? attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}
