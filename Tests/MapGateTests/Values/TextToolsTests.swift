import Foundation
import MapGate
import TestSupport
import Testing

/// The string, path, date and error helpers that replace Foundation's: the same results.
@Suite struct TextToolsTests {
    @Test(arguments: ["  a b  ", "\t x\u{A0}\u{2003}", "\n x \n", "\u{2028}y\u{85}\r", "", "   ", "é", " \u{3000}漢 ", "\u{200B}x\u{200B}", "\u{FEFF}z"])
    func trimsAsFoundation(text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimmingWhitespaceAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(arguments: ["com.example.App", "a b/c?d#e", "é漢😀", "A-Z_a.z~!*'()", "x%y+z", "/tmp/a b/%x?#[]é.mbtiles"])
    func percentEncodesAsFoundation(text: String) {
        let bundle = CharacterSet.alphanumerics.union(.init(charactersIn: ".-_"))
        #expect(text.percentEncoded(allowing: { $0.isAlphanumeric || ".-_".unicodeScalars.contains($0) }) == text.addingPercentEncoding(withAllowedCharacters: bundle))
        let path = CharacterSet.urlPathAllowed.subtracting(.init(charactersIn: "?#"))
        #expect(text.percentEncoded(allowing: \.isURLPathAllowed) == text.addingPercentEncoding(withAllowedCharacters: path))
    }

    @Test func formatsNumbersAsStringFormat() {
        for value in [0.0, 1.23456, -0.05, 1e21, 12_345.678, 0.000_123_45] {
            #expect(String(cFormat: "%.4g", value) == String(format: "%.4g", value))
            #expect(String(cFormat: "%.1f", value) == String(format: "%.1f", value))
        }
        #expect(String(cFormat: "%02ld:%02ld", 5, 7) == "05:07")
        #expect(String(cFormat: "%.300f", 1.0) == String(format: "%.300f", 1.0))
        #expect(String.hex([0, 15, 255, 16]) == "000fff10")
        #expect(String.hex([0, 15, 255], uppercase: true, separator: " ") == "00 0F FF")
    }

    @Test(arguments: ["/a/b", "/a/b/", "/", "a", "a/b", "/a", "//a//b//", "a.tar.gz", ".hidden", "/x/a.b", "a.", "/x.y/z", "/x/.y", "..", "a/.."])
    func pathsAsNSString(path: String) {
        let text = path as NSString
        #expect(PathText.lastComponent(path) == text.lastPathComponent)
        #expect(PathText.deletingExtension(path) == text.deletingPathExtension)
        // (Foundation itself traps on a path without a slash here.)
        if path.contains("/") { #expect(PathText.deletingLastComponent(path) == text.deletingLastPathComponent) }
    }

    @Test func standardizesAsNSString() {
        for path in ["/tmp/x/../y", "/tmp//a/./b/", "/a/../../b", "/srv/fixtures/./packages/x.gz", "/srv/f/../../etc/passwd", "/"] {
            #expect(PathText.standardized(path) == (path as NSString).standardizingPath)
        }
        #expect(PathText.temporaryDirectory() == NSTemporaryDirectory())
    }

    @Test func walksFoldersAsTheEnumerator() throws {
        let root = NSTemporaryDirectory() + "walk-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in ["a/b/c", "d", ".e"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for file in ["a/x.ttf", "a/b/c/y.otf", "d/z", ".e/w", "top"] { try Data().write(to: URL(fileURLWithPath: root + "/" + file)) }
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/a")
        var ours: [String] = []
        PathText.walk(root) { ours.append($0); return true }
        var theirs: [String] = []
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        while let next = walker.nextObject() as? String { theirs.append(next) }
        #expect(ours.sorted() == theirs.sorted())
        var firstTwo: [String] = []
        PathText.walk(root) { firstTwo.append($0); return firstTwo.count < 2 }
        #expect(firstTwo.count == 2)
    }

    @Test func httpDatesAsDateFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for seconds: Double in [0, 784_111_777, 1_700_000_000, 951_782_400, 4_102_444_799, -31_536_000] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.string(date) == formatter.string(from: date))
            #expect(HTTPDate.parse(formatter.string(from: date)) == date)
        }
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT", " Sun, 06 Nov 1994 08:49:37 GMT ", "Mon, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 31 Feb 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:60 GMT", "Sun,  06 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 08:49:37", "Fri, 29 Feb 2000 23:59:59 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "",
        ] {
            #expect(HTTPDate.parse(text) == formatter.date(from: text.trimmingCharacters(in: .whitespaces)), "\(text)")
        }
    }

    enum Plain: Error { case a, b }
    struct Described: LocalizedError { var errorDescription: String? { "custom text" } }
    struct Coded: Codable { var a: Int }

    /// mapgate's own words for every file error (issue 40), never Foundation's "The operation
    /// could not be completed."; a library error's own description as it is.
    @Test func errorMessagesAreMapgatesOwn() {
        var errors: [any Error] = [Plain.b, Described(), POSIXError(.ENOSPC), CocoaError(.fileNoSuchFile), CocoaError(.fileWriteOutOfSpace), CocoaError(.fileReadUnknown)]
        func collect(_ body: () throws -> Void) {
            do { try body() } catch { errors.append(error) }
        }
        collect { _ = try JSONDecoder().decode(Coded.self, from: Data("{}".utf8)) }
        collect { _ = try JSONDecoder().decode(Coded.self, from: Data(#"{"a":"x"}"#.utf8)) }
        collect { try FileManager.default.createDirectory(atPath: "/proc/no/such", withIntermediateDirectories: true) }
        collect { _ = try FileManager.default.contentsOfDirectory(atPath: "/nonexistent") }
        collect { try Data("x".utf8).write(to: URL(fileURLWithPath: "/proc/no/x")) }
        collect { try FileManager.default.removeItem(atPath: "/nonexistent/x") }
        collect { try FileManager.default.moveItem(atPath: "/nonexistent/x", toPath: "/tmp/never") }
        collect { _ = try Data(contentsOf: URL(fileURLWithPath: "/tmp")) }
        #expect(errors.count == 14)
        for error in errors {
            let message = errorMessage(error)
            #expect(!message.contains("could not be completed") && !message.isEmpty, "\(error)")
            if let code = SystemErrorReason.code(of: error) { #expect(message == SystemErrorReason.text(code), "\(error)") }
        }
        #expect(errorMessage(POSIXError(.ENOSPC)) == "the disk is full")
        #expect(errorMessage(CocoaError(.fileNoSuchFile)) == "no such file or folder")
        #expect(errorMessage(CocoaError(.fileWriteVolumeReadOnly)) == "the file system is read-only")
        #expect(errorMessage(Described()) == Described().errorDescription)
    }

    /// `UnixFile` fails as `FileHandle` did (the same `CocoaError`), said in mapgate's words: on
    /// a full disk, "the disk is full".
    @Test func fileErrorsAsFileHandle() throws {
        let ours = try #require(UnixFile(forWritingAtPath: "/dev/full"))
        let theirs = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        var mine = "", foundation = ""
        do { try ours.write(contentsOf: Data("x".utf8)) } catch { mine = errorMessage(error) }
        do { try theirs.write(contentsOf: Data("x".utf8)) } catch { foundation = errorMessage(error) }
        #expect(mine == "the disk is full" && mine == foundation)
        #expect(UnixFile(forReadingAtPath: "/nonexistent") == nil)
        let reader = try #require(UnixFile(forReadingAtPath: "/proc/self/cmdline"))
        #expect(try reader.readToEnd()?.isEmpty == false)
        #expect(try reader.read(upToCount: 10) == nil)
    }

    /// A file already as long as asked is not truncated again: on ext4 a truncate to 0, even of
    /// an empty file, has the whole file written to disk when it is closed (`auto_da_alloc`), which
    /// wrote every new download's partial file out for nothing (issue 42, item 3). Seen here by
    /// the file's modification time, which `ftruncate` always sets.
    @Test func truncatingAFileToItsOwnLengthLeavesItAlone() throws {
        let work = try TemporaryDirectory()
        let path = work.file("partial")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        var past = [timeval(tv_sec: 1_000_000_000, tv_usec: 0), timeval(tv_sec: 1_000_000_000, tv_usec: 0)]
        #expect(utimes(path, &past) == 0)
        let file = try #require(UnixFile(forWritingAtPath: path))
        try file.truncate(atOffset: 0)
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mtim.tv_sec == 1_000_000_000, "an empty file was truncated")

        try file.write(contentsOf: Data("bytes".utf8))
        try file.truncate(atOffset: 0)
        #expect(stat(path, &status) == 0 && status.st_size == 0 && status.st_mtim.tv_sec != 1_000_000_000)
        try file.write(contentsOf: Data("b".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "b", "written where the cut was")
    }
}
