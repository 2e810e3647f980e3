import FoundationEssentials
import MapGate

/// The access log of `--verbose` (`serve`, `open`).
enum RequestLog {
    /// The access log line of `--verbose`: method, target, status, bytes, time; control
    /// characters (and backslashes) in what the client sent are escaped, so a request cannot
    /// forge log lines or terminal escapes.
    @Sendable static func write(_ entry: HTTPServer.LogEntry) {
        // Status 0: libmicrohttpd refused the request itself and does not say with which status.
        let status = entry.status == 0 ? "refused" : String(entry.status)
        let line = "\(escape(entry.method)) \(escape(entry.path)) \(status) \(entry.bytes) \(String(cFormat: "%.1f", entry.seconds * 1000)) ms\n"
        UnixFile.standardError.write(Data(LocaleEncoding.bytes(line)))
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C: escaped += "\\\\"
            case 0..<0x20, 0x7F, 0x80..<0xA0: escaped += String(cFormat: "\\x%02x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
