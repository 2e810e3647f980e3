import Foundation
@testable import MapGate

// The built-in server's request head parser (HTTPServerRequest.parse) over arbitrary bytes:
// it never traps, and an accepted head has the shape the handlers rely on. This server is
// being replaced; drop this target with it.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHead(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = [UInt8](input(start, count))
    guard let request = HTTPServerRequest.parse(head: bytes[...]) else { return 0 }
    require(!request.method.isEmpty && request.method.utf8.allSatisfy { (0x41...0x5A).contains($0) }, "method \(request.method)")
    require(request.target.utf8.first == 0x2F, "target \(request.target)")
    require(request.path.utf8.first == 0x2F, "path \(request.path)")
    require(request.version.hasPrefix("HTTP/1."), "version \(request.version)")
    for header in request.headers {
        require(!header.name.isEmpty && !header.name.contains(" "), "header name \"\(header.name)\"")
        if header.name.utf8.allSatisfy({ $0 < 0x80 }) {
            require(request.header(header.name.uppercased()) != nil, "header \(header.name) not found by its upper-case name")
        }
    }
    _ = request.wantsKeepAlive
    _ = request.header("Content-Length")
    return 0
}
