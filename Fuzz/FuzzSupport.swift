import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Compiled into every fuzz target (see scripts/fuzz). Not part of the package.

/// Stops the run when a property does not hold, so that libFuzzer saves the input as a crash.
func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    guard !condition() else { return }
    FileHandle.standardError.write(Data("fuzz property violated at \(file):\(line): \(message())\n".utf8))
    abort()
}

/// Stops the run for an error of a type the parser never documents.
func unexpected(_ error: any Error, file: StaticString = #fileID, line: UInt = #line) -> Never {
    FileHandle.standardError.write(Data("fuzz: unexpected error at \(file):\(line): \(type(of: error)): \(error)\n".utf8))
    abort()
}

/// The fuzz input as `Data` (libFuzzer may pass a null pointer for an empty input).
func input(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Data {
    guard let start, count > 0 else { return Data() }
    return Data(bytes: start, count: count)
}
